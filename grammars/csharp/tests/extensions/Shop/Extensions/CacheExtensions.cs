namespace Shop.Extensions;

public static class CacheExtensions
{
    public static string Label(this Cache cache) => "cache";
}

namespace Shop.Other;

public static class HiddenExtensions
{
    public static string Describe(this Store store) => "hidden";

    public static IServiceCollection AddHidden(this IServiceCollection services) => services;
}

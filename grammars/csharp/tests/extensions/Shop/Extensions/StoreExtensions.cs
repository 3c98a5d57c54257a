namespace Shop.Extensions;

public static class StoreExtensions
{
    public static string GetOrEmpty(this Store store, string key) => store.Get(key) ?? "";

    public static string Label(this Store store) => "store";

    // Store's own Flush wins over this one.
    public static void Flush(this Store store) { }
}

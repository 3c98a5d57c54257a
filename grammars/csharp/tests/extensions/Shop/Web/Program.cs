using Microsoft.Extensions.DependencyInjection;
using Shop.Extensions;

namespace Shop.Web;

public class Program
{
    public static void Main(IServiceCollection services, string title)
    {
        services.AddShop();
        title.Words();
        services.AddHidden();
    }

    public static void Stores(Store store)
    {
        store.GetOrEmpty("a");
        store.Label();
        store.Flush();
        store.Describe();
    }

    public static void Caches(Cache cache)
    {
        cache.GetOrEmpty("b");
        cache.Label();
    }
}

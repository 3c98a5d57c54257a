using Microsoft.Extensions.DependencyInjection;

namespace Shop.Extensions;

public static class ServiceExtensions
{
    public static IServiceCollection AddShop(this IServiceCollection services) => services;

    public static int Words(this string text) => text.Split(' ').Length;
}

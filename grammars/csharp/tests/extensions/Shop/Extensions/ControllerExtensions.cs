using Microsoft.AspNetCore.Mvc;

namespace Shop.Extensions;

public static class ControllerExtensions
{
    public static string Caller(this ControllerBase controller) => "caller";
}

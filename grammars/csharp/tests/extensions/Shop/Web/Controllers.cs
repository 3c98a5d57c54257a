using Microsoft.AspNetCore.Mvc;
using Shop.Extensions;

namespace Shop.Web;

public class OrdersController : ControllerBase
{
    public string Act() => this.Caller();
}

public class AuditedOrders : OrdersController
{
    public string Audit() => this.Caller();
}

public class Worker : BackgroundService
{
    public string Run() => this.Caller();
}

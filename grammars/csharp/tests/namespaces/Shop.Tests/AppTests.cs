using Shop.Web;
using Shop.Storage;

namespace Shop.Tests;

public class AppTests
{
    public void HandlesAKey()
    {
        var app = new App(new Store("url"), new MemoryRepository());
        app.Handle("k");
        var time = new FakeTimeProvider();
        time.Advance(1);
        app.ShouldNotBeNull();
    }
}

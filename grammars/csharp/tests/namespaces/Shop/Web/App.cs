using Shop.Storage;
using static Shop.Billing.Accounts;
using Ledger = Shop.Billing.Store;

namespace Shop.Web;

public partial class App
{
    private readonly Store _store;
    private readonly IRepository _repository;

    public App(Store store, IRepository repository)
    {
        _store = store;
        this._repository = repository;
    }

    public string Handle(string key)
    {
        _repository.Save(key);
        this._repository.Save(key);
        string value = _store.Get(key);
        return this._store.Get(value) + Charge(key);
    }

    public static void Main(string[] args)
    {
        var store = Store.Open("Server=.;Database=shop");
        IRepository disk = new DiskRepository();
        App app = new App(store, new MemoryRepository());
        app.Handle("k");
        disk.Save("k");
        var ledger = new Ledger();
        ledger.Get("k");
        var builder = new Builder();
        builder.Add();
        builder.OnBuild();
        var typed = new Builder<int>();
    }
}

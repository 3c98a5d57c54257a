using System;
using static Shop.Billing.Accounts;

namespace Shop.Web;

/// The charging half of App, declared in a second file.
public partial class App
{
    string Charge(string owner)
    {
        this.Audit(owner);
        _store.Get(owner);
        return Open(owner);
    }

    private void Audit(string owner)
    {
        var now = DateTime.Now;
        Missing(owner);
    }
}

using System;

namespace Shop.Billing;

public static class Accounts
{
    public static string Open(string owner)
    {
        var ledger = new Store();
        ledger.Get(owner);
        Clock.Tick();
        return Normalise(owner) + Guid.NewGuid();
    }

    static string Normalise(string owner) => owner.Trim();
}

namespace Shop.Storage;

// A trap: Shop.Billing does not import Shop.Storage.
public static class Clock
{
    public static long Tick() => 2;
}

namespace Shop;

// Code in Shop.Billing sees this Clock without a `using`: Shop encloses it.
public static class Clock
{
    public static long Tick() => 1;
}

namespace App.Tests.Helpers;

public static class FakeClock
{
    public static void Advance()
    {
    }
}

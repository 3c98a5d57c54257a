using App.Tests.Helpers;

namespace Other;

public class Tool
{
    public void Run()
    {
        Guard.NotNull(this);
        Helper.Help();
        FakeClock.Advance();
    }
}

using App.Tests.Helpers;

namespace App.Tests;

public class ProgramTests
{
    public void Runs()
    {
        FakeClock.Advance();
        var builder = new Builder<int>();
        builder.Add();
        Builder.Make();
        Factory.Make<int>().Add();
        Builder<string, int> pairs = Factory.Pairs();
        pairs.Add();
    }
}

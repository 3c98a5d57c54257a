namespace Other;

public class Tool
{
    public int Run() => new Ledger().Post(2);
}

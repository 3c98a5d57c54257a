namespace App.Web;

public class Handler
{
    public int Handle() => new Ledger().Post(1);
}

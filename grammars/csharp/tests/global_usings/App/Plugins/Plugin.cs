namespace App.Plugins;

public class Plugin
{
    public int Load() => new Ledger().Post(3);
}

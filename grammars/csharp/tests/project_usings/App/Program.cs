namespace App;

public class Program
{
    public void Run()
    {
        Guard.NotNull(this);
        NotNull(this);
        Helper.Help();
        new Store().Save();
    }
}

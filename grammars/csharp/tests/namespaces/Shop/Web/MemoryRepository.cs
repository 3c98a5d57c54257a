namespace Shop.Web;

public class MemoryRepository : IRepository
{
    private int saved;

    public void Save(string key)
    {
        saved++;
        this.saved = this.saved + 1;
    }
}

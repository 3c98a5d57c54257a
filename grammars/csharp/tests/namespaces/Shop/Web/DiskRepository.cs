using System.IO;

namespace Shop.Web;

public class DiskRepository : BaseRepository, IRepository
{
    public void Save(string key)
    {
        Log(key);
        File.WriteAllText(key, key);
    }
}

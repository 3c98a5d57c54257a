namespace Shop.Web;

public interface IRepository
{
    void Save(string key);
}

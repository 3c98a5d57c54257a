namespace Shop;

public class Store
{
    public string Get(string key) => key;

    public void Flush() { }
}

public class Cache : Store
{
}

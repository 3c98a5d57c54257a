namespace Lib.Common;

public class Builder<TKey, TValue>
{
    public void Add()
    {
    }
}

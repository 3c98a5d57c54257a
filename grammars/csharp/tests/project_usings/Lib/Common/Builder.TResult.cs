namespace Lib.Common;

public class Builder<TResult>
{
    public void Add()
    {
    }
}

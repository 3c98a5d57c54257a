namespace Lib.Common;

public static class Factory
{
    public static Builder<T> Make<T>() => new Builder<T>();

    public static Builder<string, int> Pairs() => new Builder<string, int>();
}

namespace Lib.Common;

public static class Guard
{
    public static void NotNull(object value)
    {
    }
}

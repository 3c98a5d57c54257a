namespace Lib.Common;

public class Builder
{
    public static void Make()
    {
    }
}

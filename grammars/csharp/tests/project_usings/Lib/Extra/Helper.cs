namespace Lib.Extra;

public static class Helper
{
    public static void Help()
    {
    }
}

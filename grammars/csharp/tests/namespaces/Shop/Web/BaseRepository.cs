using System;

namespace Shop.Web;

public abstract class BaseRepository
{
    protected void Log(string message)
    {
        Console.WriteLine(message + Environment.GetEnvironmentVariable("LOG_PREFIX"));
    }
}

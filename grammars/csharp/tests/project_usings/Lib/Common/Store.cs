namespace Lib.Common;

public class Store
{
    public virtual void Save()
    {
    }
}

public class AuditedStore : Store
{
    public override void Save()
    {
        base.Save();
    }
}

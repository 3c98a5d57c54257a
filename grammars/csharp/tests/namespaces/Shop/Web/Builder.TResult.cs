namespace Shop.Web;

public class Builder<TResult>
{
    public TResult Build() => default;
}

namespace Shop.Web;

// `Builder` beside `Builder<TResult>`: the bare name is this one.
public class Builder
{
    public Func<int> OnBuild { get; set; }

    public Builder Add() => this;
}

<?php

namespace App\Query;

/** Forwards any call it does not declare. */
class Proxy
{
    public function target(): Builder
    {
        return new Builder();
    }

    public function __call(string $name, array $arguments): mixed
    {
        return $this->target()->$name(...$arguments);
    }
}

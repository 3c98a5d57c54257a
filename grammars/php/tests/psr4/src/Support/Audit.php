<?php

namespace Shop\Support;

trait Audit
{
    private array $trail = [];

    public function record(string $what): void
    {
        $this->trail[] = $what;
    }
}

<?php

namespace Shop\Billing;

abstract class Document
{
    protected int $stamped = 0;

    public function stamp(): void
    {
        $this->stamped = time();
    }

    protected function boot(): void
    {
    }
}

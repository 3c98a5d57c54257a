<?php

namespace Shop\Support;

class Clock
{
    public function now(): int
    {
        return time();
    }
}

<?php

namespace Shop\Contracts;

interface Payable
{
    public function pay(int $amount): bool;
}

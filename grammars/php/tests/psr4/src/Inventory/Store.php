<?php

namespace Shop\Inventory;

/** Stock levels: the same names as Billing's store. */
class Store
{
    public function get(string $sku): int
    {
        return 0;
    }

    public static function open(): Store
    {
        return new static();
    }
}

<?php

namespace Shop\Billing;

use Shop\Contracts\Payable;

final class Receipt extends Document implements Payable
{
    public function pay(int $amount): bool
    {
        parent::boot();
        $store = Store::open();
        $store->get('receipt');
        \Shop\Inventory\Store::open();
        return true;
    }
}

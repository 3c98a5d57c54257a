<?php

namespace Shop\Billing;

use Shop\Contracts\Payable;
use Shop\Support\{Clock, Audit as Auditing};
use function Shop\Support\format_money;

class Invoice extends Document implements Payable
{
    use Auditing;

    private Store $store;
    private bool $paid = false;

    public function __construct(private Clock $clock, Store $store)
    {
        $this->store = $store;
    }

    public function pay(int $amount): bool
    {
        $this->store->get('invoice');
        $this->record('paid');
        $this->stamp();
        $this->clock->now();
        $this->paid = true;
        $this->store->pay(1);
        return format_money($amount) !== '' && self::due();
    }

    public static function due(): bool
    {
        return true;
    }
}

<?php

namespace Shop\Billing;

use Shop\Contracts\Payable;

function settle(Payable $payment): bool
{
    return $payment->pay(100);
}

<?php

require __DIR__ . '/../vendor/autoload.php';
require_once __DIR__ . '/../bootstrap.php';

use Shop\Billing\Invoice;
use Shop\Billing\Store;
use Shop\Support\Clock;

$invoice = new Invoice(new Clock(), Store::open());
$invoice->pay(5);

<?php

namespace Shop\Tests\Billing;

use PHPUnit\Framework\TestCase;
use Shop\Billing\Invoice;

final class InvoiceTest extends TestCase
{
    public function testPay(): void
    {
        $invoice = new Invoice(new \Shop\Support\Clock(), new \Shop\Billing\Store());
        $this->assertTrue($invoice->pay(1));
    }
}

<?php

namespace App\Tests;

use App\Query\Builder;

abstract class TestCase extends \PHPUnit\Framework\TestCase
{
    protected function builder(): Builder
    {
        return new Builder();
    }
}

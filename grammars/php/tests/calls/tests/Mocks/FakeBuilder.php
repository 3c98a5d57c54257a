<?php

namespace App\Tests\Mocks;

class FakeBuilder
{
    public function rows(): array
    {
        return [];
    }
}

<?php

namespace App\Tests;

final class BuilderTest extends TestCase
{
    public function testWhere(): void
    {
        $this->assertSame([], $this->builder()->where('id')->get());
    }
}

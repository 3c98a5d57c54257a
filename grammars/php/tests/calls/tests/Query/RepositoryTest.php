<?php

namespace App\Tests\Query;

use App\Query\Builder;
use App\Query\Repository;
use App\Tests\Mocks\FakeBuilder;
use PHPUnit\Framework\TestCase as PHPUnitTestCase;
use Psr\Log\LoggerInterface;

final class RepositoryTest extends PhpUnitTestCase
{
    public function testAll(): void
    {
        $fake = new FakeBuilder();
        $fake->rows();
        $repository = new Repository(new builder(), $this->createStub(LoggerInterface::class));
        $this->assertSame([], $repository->all());
        $this->assertSame(0, $this->count());
    }
}

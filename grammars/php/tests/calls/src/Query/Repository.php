<?php

namespace App\Query;

use Psr\Log\LoggerInterface;

class Repository
{
    public function __construct(private Builder $builder, private LoggerInterface $logger)
    {
    }

    public function all(): array
    {
        $this->logger->info('all');
        return $this->builder->where('active')->limit(10)->get();
    }

    public function forward(Proxy $proxy, $unknown): void
    {
        $proxy->anything();
        $unknown->flushAll();
        $unknown->GET();
        $unknown->get();
    }
}

<?php

namespace App\Query;

class Builder
{
    public function where(string $column): static
    {
        return $this;
    }

    public function limit(int $rows): self
    {
        return $this;
    }

    public function get(): array
    {
        return [];
    }

    public function count(): int
    {
        return 0;
    }
}

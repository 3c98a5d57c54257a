<?php

namespace Shop\Http;

use GuzzleHttp\Client as Guzzle;
use Illuminate\Support\Facades\DB;

class Client
{
    public function __construct(private Guzzle $http)
    {
    }

    public function fetch(string $url): string
    {
        DB::table('requests');
        $response = $this->http->get($url);
        return (string) $response;
    }

    public function run(): string
    {
        return shell_exec('ls') . getenv('HOME');
    }
}

<?php

namespace App;

class Store
{
    public function get($key)
    {
        return $key;
    }

    public function copy()
    {
        return new Store();
    }
}

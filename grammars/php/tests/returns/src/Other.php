<?php

namespace App;

class Other
{
    public function get($key)
    {
        return $key;
    }
}

<?php
namespace App;

class Store
{
    public function get()
    {
        return 1;
    }

    public function copy()
    {
        return 2;
    }
}

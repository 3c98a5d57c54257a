<?php
namespace App;

class Other
{
    public function get()
    {
        return 3;
    }

    public function copy()
    {
        return 4;
    }
}

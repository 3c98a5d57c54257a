<?php

namespace App;

class Factory
{
    public function open()
    {
        return new Store();
    }

    public function either($flag)
    {
        if ($flag) {
            return new Store();
        }
        return new Other();
    }

    public function maybe($flag)
    {
        if ($flag) {
            return null;
        }
        return $this->open();
    }

    public function rows()
    {
        yield new Store();
    }

    public function run()
    {
        $this->open()->get(1);
        $this->open()->copy()->get(2);
        $this->maybe(true)->get(3);
        $this->either(true)->get(4);
        $this->rows()->get(5);
    }
}

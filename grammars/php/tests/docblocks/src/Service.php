<?php
namespace App;

class Service
{
    /** @var Store */
    private $store;

    /** @var Store|Other */
    private $either;

    /**
     * @param Store|null $store
     */
    public function __construct($store)
    {
        $this->store = $store;
    }

    /** @return Store */
    public function make()
    {
        return $this->factory->build();
    }

    /**
     * @param Other $unrelated
     */
    public function run($item)
    {
        $this->store->get();
        $this->make()->copy();
        /** @var Store $local */
        $local = $this->lookup();
        $local->get();
        $item->copy();
        $this->either->copy();
    }
}

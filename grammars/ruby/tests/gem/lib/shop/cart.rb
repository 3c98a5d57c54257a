require_relative 'pricing'
require_relative 'cart/checkout'

module Shop
  # A cart: Base's logging, Pricing's totals, stored on disk.
  class Cart < Base
    include Pricing

    def initialize(owner)
      @owner = owner
      @store = Storage::Disk.new
      @items = []
    end

    def add(item)
      @items.push(item)
      @total = total_for(@items)
      log('added')
      @store.write(item)
      Storage::Disk.open('cart')
      Network::Wire.open('shop.example')
      self.checkout
    end

    def save
      open('cart.txt', 'w')
    end
  end
end

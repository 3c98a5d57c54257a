require 'shop'

RSpec.describe Shop::Cart do
  it 'adds an item' do
    cart = Shop::Cart.new('ann')
    cart.add(1)
  end
end

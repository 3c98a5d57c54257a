module Shop
  module Pricing
    def total_for(items)
      items.sum
    end
  end
end

require 'net/http'
require 'shop/base'
require 'shop/cart'
require 'shop/storage/disk'
require 'shop/network/wire'

# The shop: every class lives in this module.
module Shop
  VERSION = '1.0.0'

  def self.fetch(url)
    Net::HTTP.get(URI(url))
  end
end

require 'fileutils'

module Shop
  module Storage
    class Disk
      def self.open(name)
        new
      end

      def write(item)
        File.write('cart.txt', item)
      end

      def flush
        @dirty = false
      end
    end
  end
end

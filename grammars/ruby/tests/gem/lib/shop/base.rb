module Shop
  class Base
    def log(message)
      puts message if ENV.fetch('LOG_LEVEL', 'info') == 'debug'
    end
  end
end

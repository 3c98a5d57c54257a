# A module with a method of its own and a class nested in it.
module Tools
  def self.version
    '1'
  end

  # The module's methods are not the nested class's: `version` here is no call of Tools's.
  class Runner
    def run
      version
    end
  end
end

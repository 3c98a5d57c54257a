# A store of items under a root.
class Store
  def initialize(root)
    @root = root
  end

  def save(item)
    item
  end

  def load
    @root
  end
end

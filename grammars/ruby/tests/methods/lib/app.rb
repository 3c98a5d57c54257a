require_relative 'store'

# An app: methods made by attr_reader, attr_accessor and define_method, methods called by a
# bare name, and calls on instances made with `new`.
class App
  attr_reader :store
  attr_accessor :name

  define_method(:reset) do
    @name = nil
  end

  def initialize(root)
    @root = root
  end

  def call(env)
    store.save(env)
    headers
    reset
    name
    self.name = 'app'
    env.fetch('PATH_INFO')
    Store.new(@root).save(env)
    make_store.load
  end

  def headers
    { 'content-type' => 'text/plain' }
  end

  def lookup(key)
    key
  end

  # A call with arguments calls the method, though a local of its name is bound.
  def run(lookup)
    lookup(lookup)
  end

  def make_store
    Store.new(@root)
  end

  # `headers` is a parameter here, `value` a local, `name` a block's parameter: reading
  # them calls nothing.
  def render(headers, other)
    headers
    value = 1
    value
    [1].each { |name| name }
    other.save(value)
  end
end

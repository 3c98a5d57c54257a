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

  # Memoised: `@cache ||= Store.new` makes @cache a Store, and the method returns one.
  def cache
    @cache ||= Store.new(@root)
  end

  # What a method returns is its last statement's value and every `return`'s.
  def current
    return cache if @ready
    cache
  end

  def mixed
    return 'none' if @ready
    cache
  end

  def use
    cache.load
    current.save(1)
    @cache.load
  end

  # `mixed`'s returns disagree: what it returns is not known.
  def guess
    mixed.save(1)
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

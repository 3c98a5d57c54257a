Gem::Specification.new do |spec|
  spec.name = 'shop'
  spec.version = '1.0.0'
  spec.files = Dir['lib/**/*.rb']
end

; Definitions. Captures: @definition.class (classes and modules) / @definition.function (a
; method when in a class or module) / @definition.constant on the whole node, @name on its
; name, @body on the part after the signature. `def self.x` is a method of the enclosing class or module, as `def x` is; a
; `class A::B` is named B.

(class
  name: [(constant) @name (scope_resolution name: (constant) @name)]) @definition.class

(module
  name: [(constant) @name (scope_resolution name: (constant) @name)]) @definition.class

(method
  name: (_) @name
  body: (body_statement)? @body) @definition.function

(singleton_method
  object: (self)
  name: (_) @name) @definition.function

(assignment
  left: (constant) @name) @definition.constant

; Methods made by a class body's call: `attr_reader :name` (also `attr_writer`'s `name=`, which
; a call `x.name = v` names `name`), `define_method(:name)`.
(call
  !receiver
  method: (identifier) @_attr
  arguments: (argument_list (simple_symbol) @name @definition.function)
  (#any-of? @_attr "attr_reader" "attr_writer" "attr_accessor" "attr" "define_method"))

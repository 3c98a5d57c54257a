; Inheritance. Captures: @class.name (the class or module), @base (its superclass, or a module
; it includes, extends or prepends).

(class
  name: [(constant) @class.name (scope_resolution name: (constant) @class.name)]
  superclass: (superclass [(constant) (scope_resolution)] @base))

([(class
    name: [(constant) @class.name (scope_resolution name: (constant) @class.name)]
    body: (body_statement
      (call
        !receiver
        method: (identifier) @_mixin
        arguments: (argument_list [(constant) (scope_resolution)] @base))))
  (module
    name: [(constant) @class.name (scope_resolution name: (constant) @class.name)]
    body: (body_statement
      (call
        !receiver
        method: (identifier) @_mixin
        arguments: (argument_list [(constant) (scope_resolution)] @base))))]
  (#any-of? @_mixin "include" "extend" "prepend"))

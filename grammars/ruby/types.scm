; Bindings of names and what they hold. Captures: @type.name (the bound name: `x`, or `@x` for
; an instance variable, which is an attribute of the class) with @type.constructor (the class
; `Foo.new` makes), @type.value (the assigned expression) or nothing (unknown); @type.field
; for instance variables.

(assignment
  left: (identifier) @type.name
  right: (call
    receiver: [(constant) (scope_resolution)] @type.constructor
    method: (identifier) @_new
    (#eq? @_new "new")))

(assignment
  left: (identifier) @type.name
  right: (_) @type.value
  (#not-match? @type.value "^[A-Z][A-Za-z0-9_:]*[.]new\\b"))

(assignment
  left: (instance_variable) @type.name
  right: (call
    receiver: [(constant) (scope_resolution)] @type.constructor
    method: (identifier) @_new
    (#eq? @_new "new"))) @type.field

(assignment
  left: (instance_variable) @type.name
  right: (_) @type.value
  (#not-match? @type.value "^[A-Z][A-Za-z0-9_:]*[.]new\\b")) @type.field

(operator_assignment left: (identifier) @type.name)

(method_parameters (identifier) @type.name)
(method_parameters (optional_parameter name: (identifier) @type.name))
(method_parameters (keyword_parameter name: (identifier) @type.name))
(method_parameters (splat_parameter name: (identifier) @type.name))
(method_parameters (hash_splat_parameter name: (identifier) @type.name))
(method_parameters (block_parameter name: (identifier) @type.name))
(block_parameters (identifier) @type.name)

(left_assignment_list (identifier) @type.name)
(for pattern: (identifier) @type.name)
(exception_variable (identifier) @type.name)

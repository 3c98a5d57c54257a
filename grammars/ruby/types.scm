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

; Memoised: `@client ||= Client.new(…)` makes the instance variable a Client.
(operator_assignment
  left: (instance_variable) @type.name
  right: (call
    receiver: [(constant) (scope_resolution)] @type.constructor
    method: (identifier) @_new
    (#eq? @_new "new"))) @type.field

; Parameters of methods, blocks and lambdas, destructured ones included: a bare name that is
; one of them is a local, not a call.
(method_parameters (identifier) @type.name)
(block_parameters (identifier) @type.name)
(lambda_parameters (identifier) @type.name)
(destructured_parameter (identifier) @type.name)
(optional_parameter name: (identifier) @type.name)
(keyword_parameter name: (identifier) @type.name)
(splat_parameter name: (identifier) @type.name)
(hash_splat_parameter name: (identifier) @type.name)
(block_parameter name: (identifier) @type.name)

(left_assignment_list (identifier) @type.name)
(destructured_left_assignment (identifier) @type.name)
(rest_assignment (identifier) @type.name)
(for pattern: (identifier) @type.name)
(exception_variable (identifier) @type.name)

; Names a pattern binds: `in [first, *rest]`, `in {name:}`, `in {name: n}`, `in Hash => h`.
(array_pattern (identifier) @type.name)
(find_pattern (identifier) @type.name)
(keyword_pattern key: (hash_key_symbol) @type.name !value)
(keyword_pattern value: (identifier) @type.name)
(as_pattern name: (identifier) @type.name)

; What a method returns: the value of its last statement and of every `return`, if they agree
; (@type.return_value); a last statement that makes a Foo, alone or assigned (`@client ||=
; Client.new(…)`), is a Foo (@type.return_constructor, keyed by the statement, @type.return).
(method body: (body_statement (_) @type.return_value .))
(singleton_method body: (body_statement (_) @type.return_value .))
(return (argument_list (_) @type.return_value))

(method
  body: (body_statement
    [(call
       receiver: [(constant) (scope_resolution)] @type.return_constructor
       method: (identifier) @_new)
     (assignment
       right: (call
         receiver: [(constant) (scope_resolution)] @type.return_constructor
         method: (identifier) @_new))
     (operator_assignment
       right: (call
         receiver: [(constant) (scope_resolution)] @type.return_constructor
         method: (identifier) @_new))] @type.return
    .)
  (#eq? @_new "new"))

; A method whose body is one `Foo.new(…)` returns a Foo (`def request; Request.new(env); end`).
(method
  name: (_) @type.returns
  body: (body_statement
    .
    (call
      receiver: [(constant) (scope_resolution)] @type.annotation
      method: (identifier) @_new)
    .)
  (#eq? @_new "new"))

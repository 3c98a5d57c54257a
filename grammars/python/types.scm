; Bindings of names and what they hold. Captures: @type.name (the bound name) with one of
; @type.annotation (a declared type), @type.value (the assigned expression) or nothing (a
; binding cairn does not follow: its type is unknown); @type.receiver for `self.x = …`;
; @type.global for names a `global` statement rebinds. @type.returns (a function's name) with
; @type.annotation is a declared return type, @type.property marks a property (with or without
; a declared type). Without a declared type, a function returns what its `return` statements
; agree on: @type.return_value is one's value; @type.yield makes the function a generator,
; whose result cairn does not follow (but for a fixture's, @type.yield_value).

(function_definition
  name: (identifier) @type.returns
  return_type: (type) @type.annotation)

(decorated_definition
  (decorator [(identifier) (attribute)] @type.property)
  definition: (function_definition
    name: (identifier) @type.returns
    return_type: (type) @type.annotation)
  (#match? @type.property "^(property|cached_property|functools\\.cached_property)$"))

(decorated_definition
  (decorator [(identifier) (attribute)] @type.property)
  definition: (function_definition
    name: (identifier) @type.returns
    !return_type)
  (#match? @type.property "^(property|cached_property|functools\\.cached_property)$"))

(return_statement (_) @type.return_value)
(yield (_)? @type.yield_value) @type.yield

; pytest's fixtures: a function declared one (`@pytest.fixture`, `@fixture(scope=…)`) gives
; what it returns, or what it yields (@type.fixture_def); a parameter of a test or of a
; fixture takes the fixture of its name (@type.fixture), from the file or a conftest.py above,
; and holds what it gives unless it declares a type.
(decorated_definition
  (decorator (_) @_fixture)
  definition: (function_definition name: (identifier) @type.fixture_def)
  (#match? @_fixture "^(pytest\\.)?fixture\\b"))

(decorated_definition
  (decorator (_) @_fixture)
  definition: (function_definition
    parameters: (parameters
      [(identifier) @type.name
       (typed_parameter (identifier) @type.name type: (type) @type.annotation)] @type.fixture))
  (#match? @_fixture "^(pytest\\.)?fixture\\b"))

(function_definition
  name: (identifier) @_test
  parameters: (parameters
    [(identifier) @type.name
     (typed_parameter (identifier) @type.name type: (type) @type.annotation)] @type.fixture)
  (#match? @_test "^test"))

; Names the runner fills from a list instead (`@pytest.mark.parametrize("a, b", …)`): the
; function (@type.parametrized_in) takes no fixture of those names (@type.parametrized, the
; first argument: a string of names or a list of them).
(decorated_definition
  (decorator
    (call
      function: (_) @_parametrize
      arguments: (argument_list . (_) @type.parametrized)))
  definition: (function_definition name: (identifier) @type.parametrized_in)
  (#match? @_parametrize "(^|\\.)parametrize$"))

(typed_parameter
  (identifier) @type.name
  type: (type) @type.annotation)

(typed_default_parameter
  name: (identifier) @type.name
  type: (type) @type.annotation)

(parameters (identifier) @type.name)
(default_parameter name: (identifier) @type.name)
(lambda_parameters (identifier) @type.name)
(lambda_parameters (default_parameter name: (identifier) @type.name))

(assignment
  left: (identifier) @type.name
  type: (type) @type.annotation)

(assignment
  left: (identifier) @type.name
  !type
  right: (_) @type.value)

(assignment
  left: (attribute
    object: (_) @type.receiver
    attribute: (identifier) @type.name)
  type: (type) @type.annotation)

(assignment
  left: (attribute
    object: (_) @type.receiver
    attribute: (identifier) @type.name)
  !type
  right: (_) @type.value)

(named_expression
  name: (identifier) @type.name
  value: (_) @type.value)

(augmented_assignment left: (identifier) @type.name)
(augmented_assignment
  left: (attribute
    object: (_) @type.receiver
    attribute: (identifier) @type.name))

(pattern_list (identifier) @type.name)
(tuple_pattern (identifier) @type.name)
(list_pattern (identifier) @type.name)
(list_splat_pattern (identifier) @type.name)
(pattern_list
  (attribute
    object: (_) @type.receiver
    attribute: (identifier) @type.name))
(tuple_pattern
  (attribute
    object: (_) @type.receiver
    attribute: (identifier) @type.name))
(for_statement left: (identifier) @type.name)
(for_in_clause left: (identifier) @type.name)
(as_pattern alias: (as_pattern_target) @type.name)
(global_statement (identifier) @type.name @type.global)

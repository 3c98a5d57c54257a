; Calls. Captures: @call (the call), @call.name (the called name), @call.receiver (the object
; before `.` or `->`, `this`, or the qualifier nearest the name in `Type::f()`, `ns::f()`,
; `std::chrono::system_clock::now()`: `system_clock`), @call.new on a construction, whose name
; is the class (`new Server(…)`, `Server s(…)`).

(call_expression
  function: [(identifier) @call.name (template_function name: (identifier) @call.name)]) @call

(call_expression
  function: (field_expression
    argument: (_) @call.receiver
    field: [(field_identifier) @call.name (template_method name: (field_identifier) @call.name)])) @call

(call_expression
  function: (qualified_identifier
    scope: (namespace_identifier) @call.receiver
    name: [(identifier) @call.name (template_function name: (identifier) @call.name)])) @call

(call_expression
  function: (qualified_identifier
    name: (qualified_identifier
      scope: (namespace_identifier) @call.receiver
      name: [(identifier) @call.name (template_function name: (identifier) @call.name)]))) @call

(call_expression
  function: (qualified_identifier
    name: (qualified_identifier
      name: (qualified_identifier
        scope: (namespace_identifier) @call.receiver
        name: [(identifier) @call.name (template_function name: (identifier) @call.name)])))) @call

(new_expression
  type: (type_identifier) @call.name) @call @call.new

(declaration
  type: (type_identifier) @call.name
  declarator: (init_declarator
    value: (argument_list))) @call @call.new

; Calls. Captures: @call (the call), @call.name (the called name), @call.receiver (the
; expression before the last `->`, `::` or `\`), @call.new for `new`.

(function_call_expression
  function: (name) @call.name) @call

(function_call_expression
  function: (qualified_name
    prefix: (namespace_name) @call.receiver
    (name) @call.name)) @call

(function_call_expression
  function: (qualified_name
    .
    (name) @call.name)) @call

(member_call_expression
  object: (_) @call.receiver
  name: (name) @call.name) @call

(nullsafe_member_call_expression
  object: (_) @call.receiver
  name: (name) @call.name) @call

(scoped_call_expression
  scope: (_) @call.receiver
  name: (name) @call.name) @call

(object_creation_expression
  (name) @call.name) @call @call.new

(object_creation_expression
  (qualified_name
    prefix: (namespace_name) @call.receiver
    (name) @call.name)) @call @call.new

(object_creation_expression
  (qualified_name
    .
    (name) @call.name)) @call @call.new

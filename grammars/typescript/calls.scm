; Calls. Captures: @call (the call), @call.name (the called name),
; @call.receiver (the expression before the last dot, if any), @call.new (marks `new X()`).

(call_expression
  function: (identifier) @call.name) @call

(call_expression
  function: (member_expression
    object: (_) @call.receiver
    property: (property_identifier) @call.name)) @call

(new_expression
  constructor: (identifier) @call.name @call.new) @call

(new_expression
  constructor: (member_expression
    object: (_) @call.receiver
    property: (property_identifier) @call.name) @call.new) @call

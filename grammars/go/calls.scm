; Calls. Captures: @call (the call), @call.name (the called name), @call.receiver (the
; expression before the last dot).

(call_expression
  function: (identifier) @call.name) @call

(call_expression
  function: (selector_expression
    operand: (_) @call.receiver
    field: (field_identifier) @call.name)) @call

; Calls. Captures: @call (the call), @call.name (the called name), @call.receiver (the
; expression before `.` or `->`: a call through a function pointer in a struct, never bound).

(call_expression
  function: (identifier) @call.name) @call

(call_expression
  function: (field_expression
    argument: (_) @call.receiver
    field: (field_identifier) @call.name)) @call

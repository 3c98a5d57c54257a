; Calls. Captures: @call (the call), @call.name (the called name),
; @call.receiver (the expression before the last dot, if any).

(call
  function: (identifier) @call.name) @call

(call
  function: (attribute
    object: (_) @call.receiver
    attribute: (identifier) @call.name)) @call

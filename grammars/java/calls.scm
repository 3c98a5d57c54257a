; Calls. Captures: @call (the call), @call.name (the called name), @call.receiver (the
; expression before the last dot), @call.new (marks `new Type()`).

(method_invocation
  !object
  name: (identifier) @call.name) @call

(method_invocation
  object: (_) @call.receiver
  name: (identifier) @call.name) @call

(object_creation_expression
  type: (type_identifier) @call.name @call.new) @call

(object_creation_expression
  type: (generic_type (type_identifier) @call.name) @call.new) @call

(object_creation_expression
  type: (scoped_type_identifier
    (_) @call.receiver
    (type_identifier) @call.name .) @call.new) @call

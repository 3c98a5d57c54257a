; Calls. Captures: @call (the call), @call.name (the called name), @call.receiver (the
; expression before the last dot: `this` too), @call.new (marks `new Type()`). Reading
; `DateTime.Now` or `Environment.TickCount` runs a getter whose value is the clock: a call.

(invocation_expression
  function: (identifier) @call.name) @call

(invocation_expression
  function: (generic_name . (identifier) @call.name)) @call

(invocation_expression
  function: (member_access_expression
    expression: _ @call.receiver
    name: (identifier) @call.name)) @call

(invocation_expression
  function: (member_access_expression
    expression: _ @call.receiver
    name: (generic_name . (identifier) @call.name))) @call

(object_creation_expression
  type: (identifier) @call.name @call.new) @call

; `new Builder<T>()` is named with its arguments: not the `Builder` without type parameters
; that may share its name.
(object_creation_expression
  type: (generic_name) @call.name @call.new) @call

(object_creation_expression
  type: (qualified_name
    qualifier: (_) @call.receiver
    name: (identifier) @call.name) @call.new) @call

(member_access_expression
  expression: (identifier) @call.receiver
  name: (identifier) @call.name
  (#any-of? @call.receiver "DateTime" "DateTimeOffset" "Environment")
  (#any-of? @call.name "Now" "UtcNow" "Today" "TickCount" "TickCount64")) @call

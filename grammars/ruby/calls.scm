; Calls. Captures: @call (the call), @call.name (the called name), @call.receiver (the
; expression before the last `.` or `::`), @call.new for `Foo.new` (a call of the class).

(call
  !receiver
  method: (identifier) @call.name) @call

(call
  receiver: (_) @call.receiver
  method: (identifier) @call.name
  (#not-eq? @call.name "new")) @call

(call
  receiver: (constant) @call.name
  method: (identifier) @_new
  (#eq? @_new "new")) @call @call.new

(call
  receiver: (scope_resolution
    scope: (_) @call.receiver
    name: (constant) @call.name)
  method: (identifier) @_new
  (#eq? @_new "new")) @call @call.new

; `ENV['KEY']` reads the environment: a call of ENV's `[]`.
(element_reference
  object: (constant) @call.name
  (#eq? @call.name "ENV")) @call

; Backticks run a command: a call named "`".
(subshell
  .
  "`" @call.name) @call

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

; A bare name is a call of a method without arguments where it reads as a value (the places
; language.toml's `bare_calls_in` lists) and no local of that name is bound in sight (`headers`,
; `env["X"]`, `app.call(env)`): @call.bare says so, @call.parent is the node it stands in.
(_ (identifier) @call.name @call @call.bare) @call.parent

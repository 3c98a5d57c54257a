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

; A bare name that reads as a value is a call of a method without arguments when no local of
; that name is bound in sight (`headers`, `env["X"]`, `app.call(env)`): @call.bare says so.
(program (identifier) @call.name @call @call.bare)
(body_statement (identifier) @call.name @call @call.bare)
(block_body (identifier) @call.name @call @call.bare)
(begin (identifier) @call.name @call @call.bare)
(then (identifier) @call.name @call @call.bare)
(else (identifier) @call.name @call @call.bare)
(ensure (identifier) @call.name @call @call.bare)
(do (identifier) @call.name @call @call.bare)
(parenthesized_statements (identifier) @call.name @call @call.bare)
(interpolation (identifier) @call.name @call @call.bare)
(argument_list (identifier) @call.name @call @call.bare)
(element_reference (identifier) @call.name @call @call.bare)
(binary (identifier) @call.name @call @call.bare)
(unary (identifier) @call.name @call @call.bare)
(pair (identifier) @call.name @call @call.bare)
(conditional (identifier) @call.name @call @call.bare)
(if (identifier) @call.name @call @call.bare)
(unless (identifier) @call.name @call @call.bare)
(while (identifier) @call.name @call @call.bare)
(until (identifier) @call.name @call @call.bare)
(assignment right: (identifier) @call.name @call @call.bare)
(operator_assignment right: (identifier) @call.name @call @call.bare)
(call receiver: (identifier) @call.name @call @call.bare)

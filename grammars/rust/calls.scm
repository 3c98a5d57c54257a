; Calls. Captures: @call (the call), @call.name (the called name), @call.receiver (the path or
; expression before the last `::` or `.`: `crate::store`, `Store`, `self.store`). Macros are
; not calls; their arguments, which the grammar keeps as tokens, are @call.macro_arguments:
; cairn parses them on their own as a call's and reads the calls in them (`assert_eq!(f(x),
; …)`, `format!("{}", s.name())`). `self::f()` is a name of this module; `self::a::f()` calls
; through the module `a`.

(macro_invocation (token_tree) @call.macro_arguments)

(call_expression
  function: (identifier) @call.name) @call

((call_expression
  function: (scoped_identifier
    path: [(identifier) (scoped_identifier) (super) (crate)] @call.receiver
    name: (identifier) @call.name)) @call
  (#not-match? @call.receiver "^self::"))

(call_expression
  function: (scoped_identifier
    path: (self)
    name: (identifier) @call.name)) @call

(call_expression
  function: (scoped_identifier
    path: (scoped_identifier
      path: (self)
      name: (identifier) @call.receiver)
    name: (identifier) @call.name)) @call

; `Vec::<u8>::new()`: the type without its arguments.
(call_expression
  function: (scoped_identifier
    path: (generic_type type: (_) @call.receiver)
    name: (identifier) @call.name)) @call

(call_expression
  function: (field_expression
    value: (_) @call.receiver
    field: (field_identifier) @call.name)) @call

; `parse::<u32>()`, `x.collect::<Vec<_>>()`, `Store::open::<T>()`.
(call_expression
  function: (generic_function
    function: (identifier) @call.name)) @call

(call_expression
  function: (generic_function
    function: (field_expression
      value: (_) @call.receiver
      field: (field_identifier) @call.name))) @call

(call_expression
  function: (generic_function
    function: (scoped_identifier
      path: [(identifier) (scoped_identifier) (super) (crate)] @call.receiver
      name: (identifier) @call.name))) @call

; State writes. Captures: @mutation (the write), @mutation.receiver (must be `this`),
; @mutation.target (the field or property written). A bare `_field = …` cannot be told from a
; local's assignment without scopes, so only writes through `this` count.

(assignment_expression
  left: (member_access_expression
    expression: "this" @mutation.receiver
    name: (identifier) @mutation.target)) @mutation

(postfix_unary_expression
  (member_access_expression
    expression: "this" @mutation.receiver
    name: (identifier) @mutation.target)) @mutation

(prefix_unary_expression
  (member_access_expression
    expression: "this" @mutation.receiver
    name: (identifier) @mutation.target)) @mutation

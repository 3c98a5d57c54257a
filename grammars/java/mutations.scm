; State writes. Captures: @mutation (the write), @mutation.receiver (must be `this`),
; @mutation.target (the field written). A bare `field = …` cannot be told from a local's
; assignment without scopes, so only writes through `this` count.

(assignment_expression
  left: (field_access
    object: (this) @mutation.receiver
    field: (identifier) @mutation.target)) @mutation

(update_expression
  (field_access
    object: (this) @mutation.receiver
    field: (identifier) @mutation.target)) @mutation

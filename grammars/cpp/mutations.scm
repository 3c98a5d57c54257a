; State writes. Captures: @mutation (the write), @mutation.receiver (must be `this`),
; @mutation.target (the member written). A bare member write (`port_ = p`) is told from a
; local's by the member naming conventions only (`name_`, `m_name`); writes in a constructor
; (a method named as its class) are initialisation, not state writes.

(assignment_expression
  left: (field_expression
    argument: (this) @mutation.receiver
    field: (field_identifier) @mutation.target)) @mutation

(update_expression
  argument: (field_expression
    argument: (this) @mutation.receiver
    field: (field_identifier) @mutation.target)) @mutation

((assignment_expression
  left: (identifier) @mutation.target) @mutation
  (#match? @mutation.target "^m_[A-Za-z0-9_]+$|^[A-Za-z][A-Za-z0-9_]*_$"))

((update_expression
  argument: (identifier) @mutation.target) @mutation
  (#match? @mutation.target "^m_[A-Za-z0-9_]+$|^[A-Za-z][A-Za-z0-9_]*_$"))

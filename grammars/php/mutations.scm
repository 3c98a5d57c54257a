; State writes. Captures: @mutation (the write), @mutation.receiver (must be `$this`, `self` or
; `static`), @mutation.target (the property written).

(assignment_expression
  left: (member_access_expression
    object: (variable_name) @mutation.receiver
    name: (name) @mutation.target)) @mutation

(assignment_expression
  left: (subscript_expression
    (member_access_expression
      object: (variable_name) @mutation.receiver
      name: (name) @mutation.target))) @mutation

(augmented_assignment_expression
  left: (member_access_expression
    object: (variable_name) @mutation.receiver
    name: (name) @mutation.target)) @mutation

(update_expression
  (member_access_expression
    object: (variable_name) @mutation.receiver
    name: (name) @mutation.target)) @mutation

(assignment_expression
  left: (scoped_property_access_expression
    scope: (relative_scope) @mutation.receiver
    name: (variable_name) @mutation.target)) @mutation

(update_expression
  (scoped_property_access_expression
    scope: (relative_scope) @mutation.receiver
    name: (variable_name) @mutation.target)) @mutation

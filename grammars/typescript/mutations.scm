; State writes. Captures: @mutation (the write), @mutation.receiver, @mutation.target.

(assignment_expression
  left: (member_expression
    object: (this) @mutation.receiver
    property: (property_identifier) @mutation.target)) @mutation

(augmented_assignment_expression
  left: (member_expression
    object: (this) @mutation.receiver
    property: (property_identifier) @mutation.target)) @mutation

; State writes. Captures: @mutation (the write), @mutation.receiver, @mutation.target.

(assignment
  left: (attribute
    object: (identifier) @mutation.receiver
    attribute: (identifier) @mutation.target)) @mutation

(augmented_assignment
  left: (attribute
    object: (identifier) @mutation.receiver
    attribute: (identifier) @mutation.target)) @mutation

(global_statement
  (identifier) @mutation.target) @mutation

; State writes. Captures: @mutation (the write), @mutation.target (the instance or class
; variable written: always the object's own state).

(assignment
  left: [(instance_variable) (class_variable)] @mutation.target) @mutation

(operator_assignment
  left: [(instance_variable) (class_variable)] @mutation.target) @mutation

(assignment
  left: (element_reference
    object: [(instance_variable) (class_variable)] @mutation.target)) @mutation

(call
  receiver: [(instance_variable) (class_variable)] @mutation.target
  method: (identifier) @_push
  (#any-of? @_push "push" "append" "concat" "delete" "clear" "merge!" "update" "store" "<<")) @mutation

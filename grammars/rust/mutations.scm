; State writes. Captures: @mutation (the write), @mutation.receiver (must be `self`),
; @mutation.target (the field written). Writing through `self` needs `&mut self` (or `self` by
; value), so every match is in such a method; a collection field changed in place by its
; method (`self.items.push(x)`) is a write too.

(assignment_expression
  left: (field_expression
    value: (self) @mutation.receiver
    field: (field_identifier) @mutation.target)) @mutation

(compound_assignment_expr
  left: (field_expression
    value: (self) @mutation.receiver
    field: (field_identifier) @mutation.target)) @mutation

(assignment_expression
  left: (field_expression
    value: (field_expression
      value: (self) @mutation.receiver
      field: (field_identifier) @mutation.target))) @mutation

(compound_assignment_expr
  left: (field_expression
    value: (field_expression
      value: (self) @mutation.receiver
      field: (field_identifier) @mutation.target))) @mutation

((call_expression
  function: (field_expression
    value: (field_expression
      value: (self) @mutation.receiver
      field: (field_identifier) @mutation.target)
    field: (field_identifier) @_method)) @mutation
  (#any-of? @_method "push" "push_str" "push_back" "push_front" "pop" "pop_back" "pop_front"
    "insert" "remove" "swap_remove" "clear" "extend" "append" "truncate" "retain" "drain"
    "sort" "sort_by" "sort_by_key" "dedup" "entry" "get_mut"))

; State writes. Captures: @mutation (the write), @mutation.receiver (must be the method's
; receiver), @mutation.target (the field written).

(assignment_statement
  left: (expression_list
    (selector_expression
      operand: (identifier) @mutation.receiver
      field: (field_identifier) @mutation.target))) @mutation

(inc_statement
  (selector_expression
    operand: (identifier) @mutation.receiver
    field: (field_identifier) @mutation.target)) @mutation

(dec_statement
  (selector_expression
    operand: (identifier) @mutation.receiver
    field: (field_identifier) @mutation.target)) @mutation

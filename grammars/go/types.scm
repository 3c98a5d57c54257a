; Bindings of names and what they hold. Captures: @type.name (the bound name) with one of
; @type.annotation (a declared type), @type.constructor (the type a composite literal makes),
; @type.value (the assigned expression) or nothing (unknown); @type.field for struct fields;
; @type.returns (a function's name) with @type.annotation: its result type.

(parameter_declaration
  name: (identifier) @type.name
  type: [(type_identifier) (qualified_type) (pointer_type [(type_identifier) (qualified_type)])] @type.annotation)

(parameter_declaration
  name: (identifier) @type.name
  type: [(slice_type) (array_type) (map_type) (channel_type) (function_type) (interface_type)
         (struct_type) (generic_type) (pointer_type (generic_type))])

(variadic_parameter_declaration name: (identifier) @type.name)

(var_spec
  name: (identifier) @type.name
  type: [(type_identifier) (qualified_type) (pointer_type [(type_identifier) (qualified_type)])] @type.annotation)

(var_spec
  name: (identifier) @type.name
  !type
  value: (expression_list . (_) @type.value .))

(var_spec
  name: (identifier) @type.name
  type: [(slice_type) (array_type) (map_type) (channel_type) (function_type) (interface_type)
         (struct_type) (generic_type)])

(short_var_declaration
  left: (expression_list . (identifier) @type.name .)
  right: (expression_list . (composite_literal type: [(type_identifier) (qualified_type)] @type.constructor) .))

(short_var_declaration
  left: (expression_list . (identifier) @type.name .)
  right: (expression_list . (unary_expression operator: "&" operand: (composite_literal type: [(type_identifier) (qualified_type)] @type.constructor)) .))

(short_var_declaration
  left: (expression_list . (identifier) @type.name .)
  right: (expression_list . [(call_expression) (identifier) (selector_expression)
                             (interpreted_string_literal) (raw_string_literal) (int_literal)
                             (float_literal) (true) (false)] @type.value .))

(short_var_declaration
  left: (expression_list (identifier) @type.name))

(short_var_declaration
  left: (expression_list (identifier) @type.name (identifier)))

(short_var_declaration
  left: (expression_list (identifier) (identifier) @type.name))

(range_clause left: (expression_list (identifier) @type.name))

(assignment_statement
  left: (expression_list . (identifier) @type.name .)
  right: (expression_list . (_) @type.value .))

(field_declaration
  name: (field_identifier) @type.name
  type: [(type_identifier) (qualified_type) (pointer_type [(type_identifier) (qualified_type)])] @type.annotation) @type.field

(field_declaration
  name: (field_identifier) @type.name
  type: [(slice_type) (array_type) (map_type) (channel_type) (function_type) (interface_type)
         (struct_type) (generic_type)]) @type.field

(function_declaration
  name: (identifier) @type.returns
  result: [(type_identifier) (qualified_type) (pointer_type [(type_identifier) (qualified_type)])] @type.annotation)

(method_declaration
  name: (field_identifier) @type.returns
  result: [(type_identifier) (qualified_type) (pointer_type [(type_identifier) (qualified_type)])] @type.annotation)

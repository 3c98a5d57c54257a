; Bindings of names and what they hold. Captures: @type.name (the bound name) with one of
; @type.annotation (a declared type), @type.constructor (the class `new` makes), @type.value
; (the assigned expression) or nothing (unknown); @type.receiver for `this.x = …`, @type.field
; for fields; @type.returns (a method's name) with @type.annotation: its return type. `var`
; declares nothing: the value says.

(formal_parameter
  type: [(type_identifier) (scoped_type_identifier)] @type.annotation
  name: (identifier) @type.name)

(formal_parameter name: (identifier) @type.name)
(spread_parameter (variable_declarator name: (identifier) @type.name))
(catch_formal_parameter name: (identifier) @type.name)
(inferred_parameters (identifier) @type.name)
(lambda_expression parameters: (identifier) @type.name)

(local_variable_declaration
  type: [(type_identifier) (scoped_type_identifier)] @type.annotation
  declarator: (variable_declarator name: (identifier) @type.name)
  (#not-eq? @type.annotation "var"))

(local_variable_declaration
  declarator: (variable_declarator
    name: (identifier) @type.name
    value: (object_creation_expression
      type: [(type_identifier) (scoped_type_identifier)] @type.constructor)))

(local_variable_declaration
  declarator: (variable_declarator
    name: (identifier) @type.name
    value: (_) @type.value))

(local_variable_declaration
  declarator: (variable_declarator name: (identifier) @type.name))

(enhanced_for_statement
  type: [(type_identifier) (scoped_type_identifier)] @type.annotation
  name: (identifier) @type.name
  (#not-eq? @type.annotation "var"))

(enhanced_for_statement name: (identifier) @type.name)

(field_declaration
  type: [(type_identifier) (scoped_type_identifier)] @type.annotation
  declarator: (variable_declarator name: (identifier) @type.name)) @type.field

(field_declaration
  declarator: (variable_declarator name: (identifier) @type.name)) @type.field

(assignment_expression
  left: (identifier) @type.name
  right: (object_creation_expression
    type: [(type_identifier) (scoped_type_identifier)] @type.constructor))

(assignment_expression
  left: (identifier) @type.name
  right: (_) @type.value)

(assignment_expression
  left: (field_access
    object: (_) @type.receiver
    field: (identifier) @type.name)
  right: (object_creation_expression
    type: [(type_identifier) (scoped_type_identifier)] @type.constructor))

(assignment_expression
  left: (field_access
    object: (_) @type.receiver
    field: (identifier) @type.name)
  right: (_) @type.value)

(method_declaration
  type: [(type_identifier) (scoped_type_identifier)] @type.annotation
  name: (identifier) @type.returns)

; Bindings of names and what they hold. Captures: @type.name (the bound name) with one of
; @type.annotation (a declared type), @type.constructor (the class `new` makes), @type.value
; (the assigned expression) or nothing (unknown); @type.receiver for `this.x = …`, @type.field
; for class fields; @type.returns (a function's name) with @type.annotation: its return type.
; Without a declared return type, a function returns what its `return` statements agree on:
; @type.return_constructor is the class a returned `new` makes, @type.return_value any
; returned value (@type.return the statement, read once); @type.yield makes the function a generator, whose result cairn does not
; follow.

(return_statement
  (new_expression constructor: [(identifier) (member_expression)] @type.return_constructor))
  @type.return
(return_statement (_) @type.return_value) @type.return
(yield_expression) @type.yield

(required_parameter
  pattern: (identifier) @type.name
  type: (type_annotation (type_identifier) @type.annotation))

(optional_parameter
  pattern: (identifier) @type.name
  type: (type_annotation (type_identifier) @type.annotation))

(variable_declarator
  name: (identifier) @type.name
  type: (type_annotation (type_identifier) @type.annotation))

(variable_declarator
  name: (identifier) @type.name
  value: (new_expression constructor: [(identifier) (member_expression)] @type.constructor))

(public_field_definition
  name: (property_identifier) @type.name
  type: (type_annotation (type_identifier) @type.annotation)) @type.field

(assignment_expression
  left: (member_expression
    object: (this) @type.receiver
    property: (property_identifier) @type.name)
  right: (new_expression constructor: [(identifier) (member_expression)] @type.constructor))

(required_parameter
  (accessibility_modifier)
  pattern: (identifier) @type.name
  type: (type_annotation (type_identifier) @type.annotation)) @type.field

(required_parameter pattern: (identifier) @type.name)
(optional_parameter pattern: (identifier) @type.name)

(variable_declarator
  name: (identifier) @type.name
  !type
  value: (_) @type.value)

(assignment_expression
  left: (identifier) @type.name
  right: (_) @type.value)

(assignment_expression
  left: (member_expression
    object: (_) @type.receiver
    property: (property_identifier) @type.name)
  right: (_) @type.value)

(for_in_statement left: (identifier) @type.name)
(catch_clause parameter: (identifier) @type.name)
(array_pattern (identifier) @type.name)
(shorthand_property_identifier_pattern) @type.name

(function_declaration
  name: (identifier) @type.returns
  return_type: (type_annotation (type_identifier) @type.annotation))

(method_definition
  name: (property_identifier) @type.returns
  return_type: (type_annotation (type_identifier) @type.annotation))

; JSDoc types what declares no type of its own (JavaScript): @type.doc is the comment just
; before the declaration, whose tag for the name cairn reads (`@param {Store} store`,
; `@returns {Store}`, `@type {Store}` before a variable or a `this.x = …`).
((comment) @type.doc
  .
  [(function_declaration
     parameters: (formal_parameters (required_parameter pattern: (identifier) @type.name !type)))
   (method_definition
     parameters: (formal_parameters (required_parameter pattern: (identifier) @type.name !type)))
   (export_statement
     declaration: (function_declaration
       parameters: (formal_parameters
         (required_parameter pattern: (identifier) @type.name !type))))])

((comment) @type.doc
  .
  [(function_declaration name: (identifier) @type.returns !return_type)
   (method_definition name: (property_identifier) @type.returns !return_type)
   (export_statement
     declaration: (function_declaration name: (identifier) @type.returns !return_type))])

((comment) @type.doc
  .
  [(lexical_declaration (variable_declarator name: (identifier) @type.name !type))
   (variable_declaration (variable_declarator name: (identifier) @type.name !type))])

((comment) @type.doc
  .
  (expression_statement
    (assignment_expression
      left: (member_expression
        object: (this) @type.receiver
        property: (property_identifier) @type.name))))

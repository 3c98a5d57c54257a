; Bindings of names and what they hold. Captures: @type.name (the bound name: `$x` for a local,
; `store` for a property) with one of @type.annotation (a declared type), @type.constructor (the
; class `new` makes), @type.value (the assigned expression) or nothing (unknown); @type.field
; for properties (promoted constructor parameters too); @type.receiver for `$this->x = …`;
; @type.returns (a function's name) with @type.annotation: its return type. Without a declared
; return type, a function returns what its `return` statements agree on:
; @type.return_constructor is the class a returned `new` makes, @type.return_value any returned
; value (@type.return the statement, read once); @type.yield makes the function a generator,
; whose result cairn does not follow.

(return_statement
  (object_creation_expression [(name) (qualified_name)] @type.return_constructor)) @type.return
(return_statement (_) @type.return_value) @type.return
(yield_expression) @type.yield

(simple_parameter
  type: [(named_type) @type.annotation (optional_type (named_type) @type.annotation)]
  name: (variable_name) @type.name)

(simple_parameter
  type: [(primitive_type) (union_type) (intersection_type) (optional_type (primitive_type))]
  name: (variable_name) @type.name)

(simple_parameter
  !type
  name: (variable_name) @type.name)

(variadic_parameter name: (variable_name) @type.name)

(property_promotion_parameter
  type: [(named_type) @type.annotation (optional_type (named_type) @type.annotation)]
  name: (variable_name) @type.name)

(property_promotion_parameter
  type: [(named_type) @type.annotation (optional_type (named_type) @type.annotation)]
  name: (variable_name (name) @type.name)) @type.field

(property_promotion_parameter
  !type
  name: (variable_name (name) @type.name)) @type.field

(property_declaration
  type: [(named_type) @type.annotation (optional_type (named_type) @type.annotation)]
  (property_element
    name: (variable_name (name) @type.name))) @type.field

(property_declaration
  !type
  (property_element
    name: (variable_name (name) @type.name))) @type.field

(property_declaration
  type: [(primitive_type) (union_type) (intersection_type) (optional_type (primitive_type))]
  (property_element
    name: (variable_name (name) @type.name))) @type.field

(assignment_expression
  left: (variable_name) @type.name
  right: (object_creation_expression [(name) (qualified_name)] @type.constructor))

(assignment_expression
  left: (variable_name) @type.name
  right: (_) @type.value)

(assignment_expression
  left: (member_access_expression
    object: (variable_name) @type.receiver
    name: (name) @type.name)
  right: (object_creation_expression [(name) (qualified_name)] @type.constructor))

(assignment_expression
  left: (member_access_expression
    object: (variable_name) @type.receiver
    name: (name) @type.name)
  right: (_) @type.value)

(foreach_statement (_) . (variable_name) @type.name)

(foreach_statement (pair (variable_name) @type.name))

(foreach_statement (_) . (by_ref (variable_name) @type.name))

(list_literal (variable_name) @type.name)

(catch_clause name: (variable_name) @type.name)

(function_definition
  name: (name) @type.returns
  return_type: [(named_type) @type.annotation (optional_type (named_type) @type.annotation)])

; Docblocks type what declares no type of its own: @type.doc is the comment just before the
; declaration, whose tag for the name cairn reads (`@param Store $store`, `@return Store`,
; `@var Store` before a property or an assignment; `?Store`, `Store|null` and `$this` too).
((comment) @type.doc
  .
  [(method_declaration
     parameters: (formal_parameters
       (simple_parameter !type name: (variable_name) @type.name)))
   (function_definition
     parameters: (formal_parameters
       (simple_parameter !type name: (variable_name) @type.name)))])

((comment) @type.doc . (method_declaration name: (name) @type.returns !return_type))
((comment) @type.doc . (function_definition name: (name) @type.returns !return_type))

((comment) @type.doc
  .
  (property_declaration
    !type
    (property_element name: (variable_name (name) @type.name))) @type.field)

((comment) @type.doc
  .
  (expression_statement
    (assignment_expression left: (variable_name) @type.name)))

(method_declaration
  name: (name) @type.returns
  return_type: [(named_type) @type.annotation (optional_type (named_type) @type.annotation)])

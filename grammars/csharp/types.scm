; Bindings of names and what they hold. Captures: @type.name (the bound name) with one of
; @type.annotation (a declared type), @type.constructor (the class `new` makes), @type.value
; (the assigned expression) or nothing (unknown); @type.receiver for `this.x = …`, @type.field
; for fields and properties; @type.returns (a method's name) with @type.annotation: its return
; type. `var` declares nothing: the value says. @type.extension (a method's name) with
; @type.extends: an extension method and the type its `this` parameter extends.

(parameter
  type: [(identifier) (qualified_name) (generic_name) (predefined_type)] @type.annotation
  name: (identifier) @type.name)

(parameter name: (identifier) @type.name)

(local_declaration_statement
  (variable_declaration
    type: [(identifier) (qualified_name) (generic_name) (predefined_type)] @type.annotation
    (variable_declarator name: (identifier) @type.name)))

(local_declaration_statement
  (variable_declaration
    (variable_declarator
      name: (identifier) @type.name
      (object_creation_expression
        type: [(identifier) (qualified_name) (generic_name)] @type.constructor))))

(local_declaration_statement
  (variable_declaration
    (variable_declarator
      name: (identifier) @type.name
      "="
      (_) @type.value)))

(local_declaration_statement
  (variable_declaration
    (variable_declarator name: (identifier) @type.name)))

(foreach_statement
  type: [(identifier) (qualified_name) (generic_name) (predefined_type)] @type.annotation
  left: (identifier) @type.name)

(foreach_statement left: (identifier) @type.name)

(catch_declaration name: (identifier) @type.name)

(field_declaration
  (variable_declaration
    type: [(identifier) (qualified_name) (generic_name) (predefined_type)] @type.annotation
    (variable_declarator name: (identifier) @type.name))) @type.field

(field_declaration
  (variable_declaration
    (variable_declarator name: (identifier) @type.name))) @type.field

(property_declaration
  type: [(identifier) (qualified_name) (generic_name) (predefined_type)] @type.annotation
  name: (identifier) @type.name) @type.field

(property_declaration name: (identifier) @type.name) @type.field

(assignment_expression
  left: (identifier) @type.name
  right: (object_creation_expression
    type: [(identifier) (qualified_name) (generic_name)] @type.constructor))

(assignment_expression
  left: (identifier) @type.name
  right: (_) @type.value)

(assignment_expression
  left: (member_access_expression
    expression: _ @type.receiver
    name: (identifier) @type.name)
  right: (object_creation_expression
    type: [(identifier) (qualified_name) (generic_name)] @type.constructor))

(assignment_expression
  left: (member_access_expression
    expression: _ @type.receiver
    name: (identifier) @type.name)
  right: (_) @type.value)

(method_declaration
  returns: [(identifier) (qualified_name) (generic_name) (predefined_type)] @type.annotation
  name: (identifier) @type.returns)

; `static string Label(this Store store)`: an extension method of Store.
((method_declaration
  name: (identifier) @type.extension
  parameters: (parameter_list
    .
    (parameter
      (modifier) @_this
      type: (_) @type.extends)))
  (#eq? @_this "this"))

; Known types of names. Captures: @type.name (the name), @type.annotation (a declared type)
; or @type.constructor (the class called to make the value), @type.receiver (for `this.x`).

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

; Definitions. Captures: @definition.class / @definition.function / @definition.interface /
; @definition.type / @definition.enum / @definition.constant on the whole node, @name on its name,
; @body on the part after the signature.

(class_declaration
  name: (_) @name
  body: (class_body) @body) @definition.class

(abstract_class_declaration
  name: (_) @name
  body: (class_body) @body) @definition.class

(function_declaration
  name: (identifier) @name
  body: (statement_block) @body) @definition.function

(generator_function_declaration
  name: (identifier) @name
  body: (statement_block) @body) @definition.function

(method_definition
  name: (_) @name
  body: (statement_block) @body) @definition.function

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @definition.function

(public_field_definition
  name: (property_identifier) @name
  value: (arrow_function body: (_) @body)) @definition.function

(interface_declaration
  name: (type_identifier) @name
  body: (_) @body) @definition.interface

(type_alias_declaration
  name: (type_identifier) @name
  value: (_) @body) @definition.type

(enum_declaration
  name: (identifier) @name
  body: (enum_body) @body) @definition.enum

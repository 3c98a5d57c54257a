; Definitions. Captures: @definition.class (classes and traits) / @definition.interface /
; @definition.enum / @definition.function / @definition.method / @definition.constant on the
; whole node, @name on its name, @body on the part after the signature.

(class_declaration
  name: (name) @name
  body: (declaration_list) @body) @definition.class

(trait_declaration
  name: (name) @name
  body: (declaration_list) @body) @definition.class

(interface_declaration
  name: (name) @name
  body: (declaration_list) @body) @definition.interface

(enum_declaration
  name: (name) @name
  body: (enum_declaration_list) @body) @definition.enum

(function_definition
  name: (name) @name
  body: (compound_statement) @body) @definition.function

(method_declaration
  name: (name) @name
  body: (compound_statement) @body) @definition.method

(method_declaration
  name: (name) @name
  !body) @definition.method

(const_declaration
  (const_element
    (name) @name) @definition.constant)

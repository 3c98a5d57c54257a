; Definitions. Captures: @definition.class (classes, structs, records) / @definition.interface /
; @definition.enum / @definition.function on the whole node, @name on its name, @body on the part
; after the signature; @partial on the `partial` modifier of a type declared in parts across
; files. Methods and constructors are functions inside a type (they become its methods); a
; constructor is named as its type. Abstract and interface methods have no body.

(class_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.class

(class_declaration
  (modifier) @partial
  name: (identifier) @name
  body: (declaration_list) @body
  (#eq? @partial "partial")) @definition.class

(struct_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.class

(struct_declaration
  (modifier) @partial
  name: (identifier) @name
  body: (declaration_list) @body
  (#eq? @partial "partial")) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(interface_declaration
  name: (identifier) @name
  body: (declaration_list) @body) @definition.interface

(interface_declaration
  (modifier) @partial
  name: (identifier) @name
  body: (declaration_list) @body
  (#eq? @partial "partial")) @definition.interface

(enum_declaration
  name: (identifier) @name
  body: (enum_member_declaration_list) @body) @definition.enum

(method_declaration
  name: (identifier) @name
  body: (_) @body) @definition.function

(method_declaration
  name: (identifier) @name
  !body) @definition.function

(constructor_declaration
  name: (identifier) @name
  body: (_) @body) @definition.function

(local_function_statement
  name: (identifier) @name
  body: (_) @body) @definition.function

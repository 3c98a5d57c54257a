; Definitions. Captures: @definition.class / @definition.interface / @definition.enum /
; @definition.function on the whole node, @name on its name, @body on the part after the
; signature. Methods and constructors are functions inside a class (they become its methods);
; a constructor is named as its class. Abstract and interface methods have no body.

(class_declaration
  name: (identifier) @name
  body: (class_body) @body) @definition.class

(record_declaration
  name: (identifier) @name
  body: (class_body) @body) @definition.class

(interface_declaration
  name: (identifier) @name
  body: (interface_body) @body) @definition.interface

(annotation_type_declaration
  name: (identifier) @name
  body: (annotation_type_body) @body) @definition.interface

(enum_declaration
  name: (identifier) @name
  body: (enum_body) @body) @definition.enum

(method_declaration
  name: (identifier) @name
  body: (block) @body) @definition.function

(method_declaration
  name: (identifier) @name
  !body) @definition.function

(constructor_declaration
  name: (identifier) @name
  body: (constructor_body) @body) @definition.function

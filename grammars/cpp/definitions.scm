; Definitions. Captures: @definition.class (classes, structs, unions) / @definition.enum /
; @definition.function / @definition.method on the whole node, @name on its name, @body on the
; part after the signature; a member defined outside its class (`void Server::handle() {…}`)
; carries @receiver (the class: the qualifier nearest the name) and attaches to the class
; wherever the class is defined. A member declared in the class body without a body is no
; definition (its body elsewhere is), except a pure virtual one (`virtual void run() = 0;`),
; which has no body anywhere. Namespaces are no definitions: a namespace reopens in every file
; that names it, and what it holds is the program's (see the includes module system).

(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (operator_name) (destructor_name)] @name)
  body: (compound_statement) @body) @definition.function

(function_definition
  declarator: [
    (pointer_declarator
      declarator: (function_declarator
        declarator: [(identifier) (field_identifier) (operator_name)] @name))
    (reference_declarator
      (function_declarator
        declarator: [(identifier) (field_identifier) (operator_name)] @name))
  ]
  body: (compound_statement) @body) @definition.function

(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: (_) @receiver
      name: [(identifier) (operator_name) (destructor_name)] @name))
  body: (compound_statement) @body) @definition.method

(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      name: (qualified_identifier
        scope: (_) @receiver
        name: [(identifier) (operator_name) (destructor_name)] @name)))
  body: (compound_statement) @body) @definition.method

(function_definition
  declarator: [
    (pointer_declarator
      declarator: (function_declarator
        declarator: (qualified_identifier
          scope: (_) @receiver
          name: [(identifier) (operator_name)] @name)))
    (reference_declarator
      (function_declarator
        declarator: (qualified_identifier
          scope: (_) @receiver
          name: [(identifier) (operator_name)] @name)))
  ]
  body: (compound_statement) @body) @definition.method

(function_definition
  declarator: [
    (pointer_declarator
      declarator: (function_declarator
        declarator: (qualified_identifier
          name: (qualified_identifier
            scope: (_) @receiver
            name: [(identifier) (operator_name)] @name))))
    (reference_declarator
      (function_declarator
        declarator: (qualified_identifier
          name: (qualified_identifier
            scope: (_) @receiver
            name: [(identifier) (operator_name)] @name))))
  ]
  body: (compound_statement) @body) @definition.method

; `virtual void run() = 0;`
(field_declaration
  declarator: (function_declarator
    declarator: (field_identifier) @name)
  default_value: (number_literal) @body) @definition.function

; A function-like macro is called like a function.
(preproc_function_def
  name: (identifier) @name
  value: (preproc_arg) @body) @definition.function

(class_specifier
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.class

(struct_specifier
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.class

(union_specifier
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.class

(enum_specifier
  name: (type_identifier) @name
  body: (enumerator_list) @body) @definition.enum

(type_definition
  type: (struct_specifier
    !name
    body: (field_declaration_list) @body)
  declarator: (type_identifier) @name) @definition.class

(type_definition
  type: (enum_specifier
    !name
    body: (enumerator_list) @body)
  declarator: (type_identifier) @name) @definition.enum

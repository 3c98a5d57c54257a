; Definitions. Captures: @definition.function / @definition.class (structs, unions) /
; @definition.enum on the whole node, @name on its name, @body on the part after the signature.
; A prototype (`int f(void);`, in a header or not) declares and is no definition: a call binds
; the one body of that name in the repository (see the includes module system).

(function_definition
  declarator: (function_declarator
    declarator: (identifier) @name)
  body: (compound_statement) @body) @definition.function

(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (identifier) @name))
  body: (compound_statement) @body) @definition.function

(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator
      declarator: (function_declarator
        declarator: (identifier) @name)))
  body: (compound_statement) @body) @definition.function

; A function-like macro is called like a function.
(preproc_function_def
  name: (identifier) @name
  value: (preproc_arg) @body) @definition.function

(struct_specifier
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.class

(union_specifier
  name: (type_identifier) @name
  body: (field_declaration_list) @body) @definition.class

(enum_specifier
  name: (type_identifier) @name
  body: (enumerator_list) @body) @definition.enum

; `typedef struct { … } name_t;`: an anonymous type is named by its typedef.
(type_definition
  type: (struct_specifier
    !name
    body: (field_declaration_list) @body)
  declarator: (type_identifier) @name) @definition.class

(type_definition
  type: (union_specifier
    !name
    body: (field_declaration_list) @body)
  declarator: (type_identifier) @name) @definition.class

(type_definition
  type: (enum_specifier
    !name
    body: (enumerator_list) @body)
  declarator: (type_identifier) @name) @definition.enum

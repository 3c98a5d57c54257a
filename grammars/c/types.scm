; Bindings of names. Captures: @type.name (the bound name), nothing known of what it holds.
; C has no methods, so what a name holds is never needed; its binding matters because a local
; or parameter (a function pointer `cb`) hides a function of the same name, and a file-scope
; variable is a definition of the program that is not a function. Prototypes bind nothing.

; Parameters of a definition (a prototype's parameter names bind nothing).
(function_definition
  declarator: [
    (function_declarator
      parameters: (parameter_list
        (parameter_declaration
          declarator: [
            (identifier) @type.name
            (pointer_declarator declarator: (identifier) @type.name)
            (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @type.name))
            (array_declarator declarator: (identifier) @type.name)
            (function_declarator
              declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @type.name)))
          ])))
    (pointer_declarator
      declarator: (function_declarator
        parameters: (parameter_list
          (parameter_declaration
            declarator: [
              (identifier) @type.name
              (pointer_declarator declarator: (identifier) @type.name)
              (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @type.name))
              (array_declarator declarator: (identifier) @type.name)
              (function_declarator
                declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @type.name)))
            ]))))
  ])

(declaration
  declarator: [
    (identifier) @type.name
    (pointer_declarator declarator: (identifier) @type.name)
    (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @type.name))
    (array_declarator declarator: (identifier) @type.name)
    (function_declarator
      declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @type.name)))
    (init_declarator
      declarator: [
        (identifier) @type.name
        (pointer_declarator declarator: (identifier) @type.name)
        (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @type.name))
        (array_declarator declarator: (identifier) @type.name)
        (function_declarator
          declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @type.name)))
      ])
  ])

; A typedef of a type defined elsewhere (`typedef struct ssl_st SSL;`) names a type of the
; program: bound, so a value of it is not taken for an outside one (its members are not
; followed through the alias).
(type_definition
  type: [(struct_specifier !body) (union_specifier !body) (enum_specifier !body)
         (primitive_type) (type_identifier) (sized_type_specifier)]
  declarator: [(type_identifier) @type.name
               (pointer_declarator declarator: (type_identifier) @type.name)])

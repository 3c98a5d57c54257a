; Bindings of names and what they hold. Captures: @type.name (the bound name) with
; @type.annotation (its declared class: `Server s`, `Server *p`, `Server &r`, `app::Server s`;
; `std::…` and other outside types by the name nearest them), @type.constructor (`auto p = new
; Server(…)`), @type.value (`auto s = make()`) or nothing (a type cairn does not follow, which
; still hides a function of the same name); @type.field on class members; @type.returns (a
; function's name) with @type.annotation: its declared result class.

(declaration
  type: [(type_identifier) @type.annotation
         (qualified_identifier name: (type_identifier) @type.annotation)
         (qualified_identifier name: (qualified_identifier name: (type_identifier) @type.annotation))]
  declarator: [
    (identifier) @type.name
    (pointer_declarator declarator: (identifier) @type.name)
    (reference_declarator (identifier) @type.name)
    (init_declarator
      declarator: [
        (identifier) @type.name
        (pointer_declarator declarator: (identifier) @type.name)
        (reference_declarator (identifier) @type.name)
      ])
  ])

(declaration
  type: (placeholder_type_specifier)
  declarator: (init_declarator
    declarator: [(identifier) @type.name (pointer_declarator declarator: (identifier) @type.name)]
    value: (new_expression type: (type_identifier) @type.constructor)))

(declaration
  type: (placeholder_type_specifier)
  declarator: (init_declarator
    declarator: (identifier) @type.name
    value: (call_expression function: (identifier)) @type.value))

(declaration
  declarator: [
    (identifier) @type.name
    (pointer_declarator declarator: (identifier) @type.name)
    (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @type.name))
    (reference_declarator (identifier) @type.name)
    (array_declarator declarator: (identifier) @type.name)
    (function_declarator
      declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @type.name)))
    (init_declarator
      declarator: [
        (identifier) @type.name
        (pointer_declarator declarator: (identifier) @type.name)
        (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @type.name))
        (reference_declarator (identifier) @type.name)
        (array_declarator declarator: (identifier) @type.name)
        (function_declarator
          declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @type.name)))
      ])
  ])

; Parameters of a definition (a declaration's parameter names bind nothing).
(function_definition
  declarator: [
    (function_declarator
      parameters: (parameter_list
        (parameter_declaration
          type: [(type_identifier) @type.annotation
                 (qualified_identifier name: (type_identifier) @type.annotation)]
          declarator: [
            (identifier) @type.name
            (pointer_declarator declarator: (identifier) @type.name)
            (reference_declarator (identifier) @type.name)
          ])))
    (pointer_declarator
      declarator: (function_declarator
        parameters: (parameter_list
          (parameter_declaration
            type: [(type_identifier) @type.annotation
                   (qualified_identifier name: (type_identifier) @type.annotation)]
            declarator: [
              (identifier) @type.name
              (pointer_declarator declarator: (identifier) @type.name)
              (reference_declarator (identifier) @type.name)
            ]))))
    (reference_declarator
      (function_declarator
        parameters: (parameter_list
          (parameter_declaration
            type: [(type_identifier) @type.annotation
                   (qualified_identifier name: (type_identifier) @type.annotation)]
            declarator: [
              (identifier) @type.name
              (pointer_declarator declarator: (identifier) @type.name)
              (reference_declarator (identifier) @type.name)
            ]))))
  ])

(function_definition
  declarator: [
    (function_declarator
      parameters: (parameter_list
        (parameter_declaration
          declarator: [
            (identifier) @type.name
            (pointer_declarator declarator: (identifier) @type.name)
            (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @type.name))
            (reference_declarator (identifier) @type.name)
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
              (reference_declarator (identifier) @type.name)
              (array_declarator declarator: (identifier) @type.name)
              (function_declarator
                declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @type.name)))
            ]))))
    (reference_declarator
      (function_declarator
        parameters: (parameter_list
          (parameter_declaration
            declarator: [
              (identifier) @type.name
              (pointer_declarator declarator: (identifier) @type.name)
              (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @type.name))
              (reference_declarator (identifier) @type.name)
              (array_declarator declarator: (identifier) @type.name)
              (function_declarator
                declarator: (parenthesized_declarator (pointer_declarator declarator: (identifier) @type.name)))
            ]))))
  ])

(optional_parameter_declaration
  declarator: [(identifier) @type.name (reference_declarator (identifier) @type.name)])

(field_declaration
  type: [(type_identifier) @type.annotation
         (qualified_identifier name: (type_identifier) @type.annotation)]
  declarator: [
    (field_identifier) @type.name
    (pointer_declarator declarator: (field_identifier) @type.name)
    (reference_declarator (field_identifier) @type.name)
  ]) @type.field

(field_declaration
  declarator: [
    (field_identifier) @type.name
    (pointer_declarator declarator: (field_identifier) @type.name)
    (array_declarator declarator: (field_identifier) @type.name)
  ]) @type.field

; Namespaces reopen in every file that names them: bound, never defined, so `ns::f()` is not
; taken for an outside call.
(namespace_definition
  name: (namespace_identifier) @type.name)

(function_definition
  type: [(type_identifier) @type.annotation
         (qualified_identifier name: (type_identifier) @type.annotation)]
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [(identifier) @type.returns
                   (field_identifier) @type.returns
                   (qualified_identifier name: (identifier) @type.returns)
                   (qualified_identifier name: (qualified_identifier name: (identifier) @type.returns))])))

(function_definition
  type: [(type_identifier) @type.annotation
         (qualified_identifier name: (type_identifier) @type.annotation)]
  declarator: (reference_declarator
    (function_declarator
      declarator: [(identifier) @type.returns
                   (field_identifier) @type.returns
                   (qualified_identifier name: (identifier) @type.returns)
                   (qualified_identifier name: (qualified_identifier name: (identifier) @type.returns))])))

(function_definition
  type: [(type_identifier) @type.annotation
         (qualified_identifier name: (type_identifier) @type.annotation)]
  declarator: (function_declarator
    declarator: [(identifier) @type.returns
                 (field_identifier) @type.returns
                 (qualified_identifier name: (identifier) @type.returns)
                 (qualified_identifier name: (qualified_identifier name: (identifier) @type.returns))]))

; A typedef or alias of a type defined elsewhere (`typedef struct ssl_st SSL;`, `using Id =
; int;`) and a template's type parameter name types of the program: bound, so a value of one is
; not taken for an outside one (members are not followed through an alias).
(type_definition
  type: [(struct_specifier !body) (union_specifier !body) (enum_specifier !body)
         (primitive_type) (type_identifier) (sized_type_specifier) (qualified_identifier)
         (template_type)]
  declarator: [(type_identifier) @type.name
               (pointer_declarator declarator: (type_identifier) @type.name)])

(alias_declaration
  name: (type_identifier) @type.name)

(type_parameter_declaration
  (type_identifier) @type.name)

(optional_type_parameter_declaration
  name: (type_identifier) @type.name)

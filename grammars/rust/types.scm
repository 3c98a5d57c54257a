; Bindings of names and what they hold. Captures: @type.name (the bound name) with one of
; @type.annotation (a declared type: `Store`, `&mut Store`, `&dyn Shape`, `store::Store`, the
; `T` of `Box<T>`, `Arc<T>`, `Rc<T>`, which call T's methods, the whole `Option<T>` and
; `Result<T, E>`, carriers of T (`[carriers] types`), the `Vec` of any other `Vec<T>`), @type.constructor (the type a
; struct literal makes), @type.value (the assigned expression: `Store::new()`, `open()?`,
; `run().await`, `a.b().c()`) or nothing (unknown: patterns, loop and closure variables);
; @type.field for struct fields and enum variants; @type.declared for a name a macro's tokens
; declare; @type.returns (a function's name) with @type.annotation: its result type (`Self`
; is the impl's type) and @type.carrier: the `Result` or `Option` carrying it.

; Parameters.
(parameter
  pattern: (identifier) @type.name
  type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation)

(parameter
  pattern: (identifier) @type.name
  type: (reference_type type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation))

(parameter
  pattern: (identifier) @type.name
  type: (reference_type type: (dynamic_type trait: [(type_identifier) (scoped_type_identifier)] @type.annotation)))

((parameter
  pattern: (identifier) @type.name
  type: (generic_type
      type: (type_identifier) @_wrapper
      type_arguments: (type_arguments . [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation .)))
  (#any-of? @_wrapper "Box" "Arc" "Rc"))

((parameter
  pattern: (identifier) @type.name
  type: (reference_type type: (generic_type
      type: (type_identifier) @_wrapper
      type_arguments: (type_arguments . [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation .))))
  (#any-of? @_wrapper "Box" "Arc" "Rc"))

((parameter
  pattern: (identifier) @type.name
  type: [(generic_type type: [(type_identifier) (scoped_type_identifier)] @type.annotation @_generic)
         (reference_type type: (generic_type type: [(type_identifier) (scoped_type_identifier)] @type.annotation @_generic))])
  (#not-any-of? @_generic "Box" "Arc" "Rc" "Option" "Result"))

; `Option<Store>`, `Result<Store, E>` (behind `&` too): the whole type, a carrier of Store.
((parameter
  pattern: (identifier) @type.name
  type: [(generic_type type: (type_identifier) @_carrier) @type.annotation
         (reference_type type: (generic_type type: (type_identifier) @_carrier) @type.annotation)])
  (#any-of? @_carrier "Option" "Result"))

(parameter
  pattern: (identifier) @type.name)

; Struct fields.
(field_declaration
  name: (field_identifier) @type.name
  type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation) @type.field

(field_declaration
  name: (field_identifier) @type.name
  type: (reference_type type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation)) @type.field

(field_declaration
  name: (field_identifier) @type.name
  type: (reference_type type: (dynamic_type trait: [(type_identifier) (scoped_type_identifier)] @type.annotation))) @type.field

((field_declaration
  name: (field_identifier) @type.name
  type: (generic_type
      type: (type_identifier) @_wrapper
      type_arguments: (type_arguments . [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation .))) @type.field
  (#any-of? @_wrapper "Box" "Arc" "Rc"))

((field_declaration
  name: (field_identifier) @type.name
  type: (reference_type type: (generic_type
      type: (type_identifier) @_wrapper
      type_arguments: (type_arguments . [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation .)))) @type.field
  (#any-of? @_wrapper "Box" "Arc" "Rc"))

((field_declaration
  name: (field_identifier) @type.name
  type: [(generic_type type: [(type_identifier) (scoped_type_identifier)] @type.annotation @_generic)
         (reference_type type: (generic_type type: [(type_identifier) (scoped_type_identifier)] @type.annotation @_generic))]) @type.field
  (#not-any-of? @_generic "Box" "Arc" "Rc" "Option" "Result"))

((field_declaration
  name: (field_identifier) @type.name
  type: [(generic_type type: (type_identifier) @_carrier) @type.annotation
         (reference_type type: (generic_type type: (type_identifier) @_carrier) @type.annotation)]) @type.field
  (#any-of? @_carrier "Option" "Result"))

(field_declaration
  name: (field_identifier) @type.name) @type.field

; `let` with a declared type.
(let_declaration
  pattern: (identifier) @type.name
  type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation)

(let_declaration
  pattern: (identifier) @type.name
  type: (reference_type type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation))

(let_declaration
  pattern: (identifier) @type.name
  type: (reference_type type: (dynamic_type trait: [(type_identifier) (scoped_type_identifier)] @type.annotation)))

((let_declaration
  pattern: (identifier) @type.name
  type: (generic_type
      type: (type_identifier) @_wrapper
      type_arguments: (type_arguments . [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation .)))
  (#any-of? @_wrapper "Box" "Arc" "Rc"))

((let_declaration
  pattern: (identifier) @type.name
  type: (reference_type type: (generic_type
      type: (type_identifier) @_wrapper
      type_arguments: (type_arguments . [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation .))))
  (#any-of? @_wrapper "Box" "Arc" "Rc"))

((let_declaration
  pattern: (identifier) @type.name
  type: [(generic_type type: [(type_identifier) (scoped_type_identifier)] @type.annotation @_generic)
         (reference_type type: (generic_type type: [(type_identifier) (scoped_type_identifier)] @type.annotation @_generic))])
  (#not-any-of? @_generic "Box" "Arc" "Rc" "Option" "Result"))

((let_declaration
  pattern: (identifier) @type.name
  type: [(generic_type type: (type_identifier) @_carrier) @type.annotation
         (reference_type type: (generic_type type: (type_identifier) @_carrier) @type.annotation)])
  (#any-of? @_carrier "Option" "Result"))

(let_declaration
  pattern: (identifier) @type.name)

; `let` with a value.
(let_declaration
  pattern: (identifier) @type.name
  value: (_) @type.value)

(let_declaration
  pattern: (identifier) @type.name
  value: (struct_expression name: [(type_identifier) (scoped_type_identifier)] @type.constructor))

; Enum variants: names the enum declares (`Kind::Plain(x)` is no outside call).
(enum_variant name: (identifier) @type.name) @type.field

; A function written in a macro's tokens (`macro_rules! m { … fn name(…) … }`, or passed to
; one): a name the repository declares, of no class cairn knows.
(token_tree "fn" . (identifier) @type.name) @type.declared

; Names bound by patterns, loops and closures: unknown.
(tuple_pattern (identifier) @type.name)
(tuple_struct_pattern type: (_) (identifier) @type.name)
(field_pattern pattern: (identifier) @type.name)
(shorthand_field_identifier) @type.name
(match_pattern (identifier) @type.name)
(for_expression pattern: (identifier) @type.name)
(closure_parameters (identifier) @type.name)
(closure_parameters (parameter pattern: (identifier) @type.name))

; Result types, as written or behind a reference (`-> &Path`, `-> &mut Self`). `Result<T, _>`
; and `Option<T>` carry their `T` (@type.carrier): their methods are std's, `?` and `.unwrap()`
; give the `T`; `Box<T>`, `Arc<T>`, `Rc<T>` call T's methods.
(([(function_item
    name: (identifier) @type.returns
    return_type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation)
   (function_signature_item
    name: (identifier) @type.returns
    return_type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation)])
  (#not-eq? @type.annotation "Self"))

(([(function_item
    name: (identifier) @type.returns
    return_type: (reference_type type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation))
   (function_signature_item
    name: (identifier) @type.returns
    return_type: (reference_type type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation))])
  (#not-eq? @type.annotation "Self"))

(([(function_item
    name: (identifier) @type.returns
    return_type: (generic_type
      type: [(type_identifier) (scoped_type_identifier)] @type.carrier
      type_arguments: (type_arguments . [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation)))
   (function_signature_item
    name: (identifier) @type.returns
    return_type: (generic_type
      type: [(type_identifier) (scoped_type_identifier)] @type.carrier
      type_arguments: (type_arguments . [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation)))])
  (#not-eq? @type.annotation "Self")
  (#match? @type.carrier "(^|::)(Result|Option)$"))

(([(function_item
    name: (identifier) @type.returns
    return_type: (generic_type
      type: [(type_identifier) (scoped_type_identifier)] @type.carrier
      type_arguments: (type_arguments . (reference_type type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation))))
   (function_signature_item
    name: (identifier) @type.returns
    return_type: (generic_type
      type: [(type_identifier) (scoped_type_identifier)] @type.carrier
      type_arguments: (type_arguments . (reference_type type: [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation))))])
  (#not-eq? @type.annotation "Self")
  (#match? @type.carrier "(^|::)(Result|Option)$"))

((function_item
  name: (identifier) @type.returns
  return_type: (generic_type
    type: [(type_identifier) (scoped_type_identifier)] @_wrapper
    type_arguments: (type_arguments . [(type_identifier) (scoped_type_identifier) (primitive_type)] @type.annotation)))
  (#not-eq? @type.annotation "Self")
  (#match? @_wrapper "(^|::)(Box|Arc|Rc)$"))

((impl_item
  type: [(type_identifier) @type.annotation (generic_type type: (type_identifier) @type.annotation)]
  body: (declaration_list
    (function_item
      name: (identifier) @type.returns
      return_type: [(type_identifier) (reference_type type: (type_identifier))] @_self)))
  (#match? @_self "^&?(mut )?Self$"))

((impl_item
  type: [(type_identifier) @type.annotation (generic_type type: (type_identifier) @type.annotation)]
  body: (declaration_list
    (function_item
      name: (identifier) @type.returns
      return_type: (generic_type
        type: [(type_identifier) (scoped_type_identifier)] @type.carrier
        type_arguments: (type_arguments . [(type_identifier) (reference_type type: (type_identifier))] @_self)))))
  (#match? @_self "^&?(mut )?Self$")
  (#match? @type.carrier "(^|::)(Result|Option)$"))

((impl_item
  type: [(type_identifier) @type.annotation (generic_type type: (type_identifier) @type.annotation)]
  body: (declaration_list
    (function_item
      name: (identifier) @type.returns
      return_type: (generic_type
        type: [(type_identifier) (scoped_type_identifier)] @_wrapper
        type_arguments: (type_arguments . (type_identifier) @_self)))))
  (#eq? @_self "Self")
  (#match? @_wrapper "(^|::)(Box|Arc|Rc)$"))

; Definitions. Captures: @definition.class (structs, enums, unions: types with methods) /
; @definition.interface (traits) / @definition.type / @definition.function / @definition.method /
; @definition.constant on the whole node, @name on its name, @body on the part after the
; signature. A function of an `impl` block carries @receiver (the type it is implemented for,
; `Server` or `Server<T>`): it is that type's method wherever the block is, and `self` acts there
; as the type's instance. Inline modules (`mod tests { … }`) are not definitions: their items
; are the file's.

(struct_item
  name: (type_identifier) @name
  body: (_)? @body) @definition.class

(enum_item
  name: (type_identifier) @name
  body: (_) @body) @definition.class

(union_item
  name: (type_identifier) @name
  body: (_) @body) @definition.class

(trait_item
  name: (type_identifier) @name
  body: (_) @body) @definition.interface

(trait_item
  body: (declaration_list
    (function_item
      name: (identifier) @name
      body: (block) @body) @definition.function))

(trait_item
  body: (declaration_list
    (function_signature_item
      name: (identifier) @name) @definition.function))

(impl_item
  type: (_) @receiver
  body: (declaration_list
    (function_item
      name: (identifier) @name
      body: (block) @body) @definition.method))

; Functions of the file, of an inline module (two deep) and nested in a function.
(source_file
  (function_item
    name: (identifier) @name
    body: (block) @body) @definition.function)

(mod_item
  body: (declaration_list
    (function_item
      name: (identifier) @name
      body: (block) @body) @definition.function))

(mod_item
  body: (declaration_list
    (mod_item
      body: (declaration_list
        (function_item
          name: (identifier) @name
          body: (block) @body) @definition.function))))

(block
  (function_item
    name: (identifier) @name
    body: (block) @body) @definition.function)

; Type aliases and constants outside `impl` and trait bodies (associated ones belong to them).
(source_file
  (type_item
    name: (type_identifier) @name
    type: (_) @body) @definition.type)

(mod_item
  body: (declaration_list
    (type_item
      name: (type_identifier) @name
      type: (_) @body) @definition.type))

(source_file
  [(const_item name: (identifier) @name) (static_item name: (identifier) @name)] @definition.constant)

(mod_item
  body: (declaration_list
    [(const_item name: (identifier) @name) (static_item name: (identifier) @name)] @definition.constant))

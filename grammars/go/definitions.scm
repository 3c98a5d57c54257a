; Definitions. Captures: @definition.class (structs) / @definition.interface / @definition.type /
; @definition.function / @definition.method / @definition.constant on the whole node, @name on
; its name, @body on the part after the signature; a method declared for a type carries
; @receiver (the type, `*Server` or `Server[T]`) and @receiver.self (the receiver's name).

(function_declaration
  name: (identifier) @name
  body: (block) @body) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      name: (identifier)? @receiver.self
      type: (_) @receiver))
  name: (field_identifier) @name
  body: (block) @body) @definition.method

(type_spec
  name: (type_identifier) @name
  type: (struct_type) @body) @definition.class

(type_spec
  name: (type_identifier) @name
  type: (interface_type) @body) @definition.interface

(type_spec
  name: (type_identifier) @name
  type: [(type_identifier) (qualified_type) (generic_type) (pointer_type) (slice_type)
         (array_type) (map_type) (channel_type) (function_type)] @body) @definition.type

(type_alias
  name: (type_identifier) @name
  type: (_) @body) @definition.type

(interface_type
  (method_elem
    name: (field_identifier) @name) @definition.function)

(source_file
  (const_declaration
    (const_spec
      name: (identifier) @name) @definition.constant))

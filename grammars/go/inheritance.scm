; Inheritance. Captures: @class.name (the struct or interface), @base (an embedded type: a
; struct's field without a name, an interface's embedded interface).

(type_spec
  name: (type_identifier) @class.name
  type: (struct_type
    (field_declaration_list
      (field_declaration
        !name
        type: [(type_identifier) (qualified_type)] @base))))

(type_spec
  name: (type_identifier) @class.name
  type: (struct_type
    (field_declaration_list
      (field_declaration
        !name
        type: (pointer_type [(type_identifier) (qualified_type)] @base)))))

(type_spec
  name: (type_identifier) @class.name
  type: (interface_type
    (type_elem [(type_identifier) (qualified_type)] @base)))

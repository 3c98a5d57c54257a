; Inheritance. Captures: @class.name (the class), @base (a base class: its name, the name
; nearest it in `ns::Base`, the template in `Base<T>`).

(class_specifier
  name: (type_identifier) @class.name
  (base_class_clause
    [(type_identifier) @base
     (qualified_identifier name: (type_identifier) @base)
     (template_type name: (type_identifier) @base)
     (qualified_identifier name: (template_type name: (type_identifier) @base))]))

(struct_specifier
  name: (type_identifier) @class.name
  (base_class_clause
    [(type_identifier) @base
     (qualified_identifier name: (type_identifier) @base)
     (template_type name: (type_identifier) @base)
     (qualified_identifier name: (template_type name: (type_identifier) @base))]))

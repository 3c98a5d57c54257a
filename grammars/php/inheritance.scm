; Inheritance. Captures: @class.name (the class, interface, trait or enum), @base (a class it
; extends, an interface it implements or extends, a trait it uses).

(class_declaration
  name: (name) @class.name
  (base_clause [(name) (qualified_name)] @base))

(class_declaration
  name: (name) @class.name
  (class_interface_clause [(name) (qualified_name)] @base))

(interface_declaration
  name: (name) @class.name
  (base_clause [(name) (qualified_name)] @base))

(enum_declaration
  name: (name) @class.name
  (class_interface_clause [(name) (qualified_name)] @base))

([(class_declaration name: (name) @class.name body: (declaration_list (use_declaration [(name) (qualified_name)] @base)))
  (trait_declaration name: (name) @class.name body: (declaration_list (use_declaration [(name) (qualified_name)] @base)))
  (enum_declaration name: (name) @class.name body: (enum_declaration_list (use_declaration [(name) (qualified_name)] @base)))])

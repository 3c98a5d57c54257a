; Inheritance. Captures: @class.name (the class, struct, record or interface), @base (a base
; class or an implemented or extended interface).

(class_declaration
  name: (identifier) @class.name
  (base_list [(identifier) (qualified_name) (generic_name)] @base))

(struct_declaration
  name: (identifier) @class.name
  (base_list [(identifier) (qualified_name) (generic_name)] @base))

(record_declaration
  name: (identifier) @class.name
  (base_list [(identifier) (qualified_name) (generic_name) (primary_constructor_base_type)] @base))

(interface_declaration
  name: (identifier) @class.name
  (base_list [(identifier) (qualified_name) (generic_name)] @base))

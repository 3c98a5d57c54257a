; Inheritance. Captures: @class.name (the class or interface), @base (one base expression).

(class_declaration
  name: (_) @class.name
  (class_heritage (extends_clause value: (_) @base)))

(abstract_class_declaration
  name: (_) @class.name
  (class_heritage (extends_clause value: (_) @base)))

(class_declaration
  name: (_) @class.name
  (class_heritage (implements_clause (_) @base)))

(abstract_class_declaration
  name: (_) @class.name
  (class_heritage (implements_clause (_) @base)))

(interface_declaration
  name: (_) @class.name
  (extends_type_clause (_) @base))

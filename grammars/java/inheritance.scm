; Inheritance. Captures: @class.name (the class, interface, enum or record), @base (a superclass
; or an implemented or extended interface).

(class_declaration
  name: (identifier) @class.name
  superclass: (superclass [(type_identifier) (scoped_type_identifier) (generic_type)] @base))

(class_declaration
  name: (identifier) @class.name
  interfaces: (super_interfaces
    (type_list [(type_identifier) (scoped_type_identifier) (generic_type)] @base)))

(enum_declaration
  name: (identifier) @class.name
  interfaces: (super_interfaces
    (type_list [(type_identifier) (scoped_type_identifier) (generic_type)] @base)))

(record_declaration
  name: (identifier) @class.name
  interfaces: (super_interfaces
    (type_list [(type_identifier) (scoped_type_identifier) (generic_type)] @base)))

(interface_declaration
  name: (identifier) @class.name
  (extends_interfaces
    (type_list [(type_identifier) (scoped_type_identifier) (generic_type)] @base)))

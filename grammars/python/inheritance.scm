; Inheritance. Captures: @class.name (the class), @base (one base-class expression).

(class_definition
  name: (identifier) @class.name
  superclasses: (argument_list
    [(identifier) (attribute)] @base))

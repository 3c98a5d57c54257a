; Inheritance. Captures: @class.name (the definition that inherits), @base (a supertrait, or the
; trait an `impl` block implements; type arguments are dropped). An `impl Trait for Type` is
; named by each of its functions (@class.name on a method): the graph gives the base to the type
; the methods are attached to, wherever the type is declared (an impl without functions, such
; as a marker trait's, is not seen).

(trait_item
  name: (type_identifier) @class.name
  bounds: (trait_bounds
    [(type_identifier) (scoped_type_identifier) (generic_type)] @base))

(impl_item
  trait: [(type_identifier) (scoped_type_identifier) (generic_type)] @base
  body: (declaration_list
    (function_item
      name: (identifier) @class.name)))

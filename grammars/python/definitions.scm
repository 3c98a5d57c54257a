; Definitions. Captures: @definition.class / @definition.function / @definition.constant
; on the whole node, @name on its name, @body on the part after the signature, @doc on a docstring.

(class_definition
  name: (identifier) @name
  body: (block . (expression_statement . (string) @doc)?) @body) @definition.class

(function_definition
  name: (identifier) @name
  body: (block . (expression_statement . (string) @doc)?) @body) @definition.function

(module
  (expression_statement
    (assignment
      left: (identifier) @name
      (#match? @name "^[A-Z][A-Z0-9_]*$"))) @definition.constant)

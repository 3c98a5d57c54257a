; Known types of names. Captures: @type.name (the name), @type.annotation (a declared type)
; or @type.constructor (the class called to make the value), @type.receiver (for `self.x = …`).

(typed_parameter
  (identifier) @type.name
  type: (type) @type.annotation)

(typed_default_parameter
  name: (identifier) @type.name
  type: (type) @type.annotation)

(assignment
  left: (identifier) @type.name
  type: (type) @type.annotation)

(assignment
  left: (identifier) @type.name
  !type
  right: (call function: [(identifier) (attribute)] @type.constructor))

(assignment
  left: (attribute
    object: (identifier) @type.receiver
    attribute: (identifier) @type.name)
  right: (call function: [(identifier) (attribute)] @type.constructor))

; Imports. Captures: @package (the package the file declares), @import (the declaration),
; @import.from (the package, or the type of a static import), @import.name (the imported type or
; static member), @import.wildcard (`.*`: every type of the package, or every static member).

(package_declaration [(identifier) (scoped_identifier)] @package)

(import_declaration
  (scoped_identifier
    scope: (_) @import.from
    name: (identifier) @import.name) .) @import

(import_declaration
  [(identifier) (scoped_identifier)] @import.from
  (asterisk) @import.wildcard) @import

; Imports. Captures: @import (the spec), @import.module (the package path: the import binds the
; package's name), @import.alias (`import alias "path"`).

(import_spec
  !name
  path: (interpreted_string_literal (interpreted_string_literal_content) @import.module)) @import

(import_spec
  name: (package_identifier) @import.alias
  path: (interpreted_string_literal (interpreted_string_literal_content) @import.module)) @import

(import_spec
  name: [(blank_identifier) (dot)]
  path: (interpreted_string_literal (interpreted_string_literal_content) @import.source)) @import

; Imports. Captures: @import (the statement), @import.module (a module imported whole),
; @import.from (the module names come from), @import.name, @import.alias, @import.wildcard.

(import_statement
  name: (dotted_name) @import.module) @import

(import_statement
  name: (aliased_import
    name: (dotted_name) @import.module
    alias: (identifier) @import.alias)) @import

(import_from_statement
  module_name: (_) @import.from
  name: (dotted_name) @import.name) @import

(import_from_statement
  module_name: (_) @import.from
  name: (aliased_import
    name: (dotted_name) @import.name
    alias: (identifier) @import.alias)) @import

(import_from_statement
  module_name: (_) @import.from
  (wildcard_import) @import.wildcard) @import

; Imports. Captures: @import (the statement), @import.source (the module specifier string),
; @import.name (an imported or re-exported name), @import.alias, @import.default,
; @import.namespace, @import.wildcard, @import.reexport (marks `export … from`).

(import_statement
  source: (string (string_fragment) @import.source)) @import

(import_statement
  (import_clause (identifier) @import.default)
  source: (string (string_fragment) @import.source)) @import

(import_statement
  (import_clause (namespace_import (identifier) @import.namespace))
  source: (string (string_fragment) @import.source)) @import

(import_statement
  (import_clause (named_imports (import_specifier name: (_) @import.name !alias)))
  source: (string (string_fragment) @import.source)) @import

(import_statement
  (import_clause (named_imports (import_specifier name: (_) @import.name alias: (_) @import.alias)))
  source: (string (string_fragment) @import.source)) @import

(export_statement
  "*" @import.wildcard @import.reexport
  source: (string (string_fragment) @import.source)) @import

(export_statement
  (namespace_export (_) @import.namespace) @import.reexport
  source: (string (string_fragment) @import.source)) @import

(export_statement
  (export_clause (export_specifier name: (_) @import.name !alias)) @import.reexport
  source: (string (string_fragment) @import.source)) @import

(export_statement
  (export_clause (export_specifier name: (_) @import.name alias: (_) @import.alias)) @import.reexport
  source: (string (string_fragment) @import.source)) @import

(call_expression
  function: (identifier) @_req
  arguments: (arguments . (string (string_fragment) @import.source))
  (#eq? @_req "require")) @import

(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @import.source))) @import

(lexical_declaration
  (variable_declarator
    name: (identifier) @import.default
    value: (call_expression
      function: (identifier) @_req
      arguments: (arguments . (string (string_fragment) @import.source)))
    (#eq? @_req "require"))) @import

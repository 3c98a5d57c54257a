; Imports. Captures: @import (the clause), @import.from (the namespace, `App\Models`),
; @import.name (the class, function or namespace imported from it), @import.alias (`as X`);
; @import.module for `require`/`include` of a literal path (`__DIR__ . '/x.php'` too); @package for
; the namespace the file declares (`namespace App\Models;`).

(namespace_definition
  name: (namespace_name) @package)

(namespace_use_clause
  (qualified_name
    prefix: (namespace_name) @import.from
    (name) @import.name)
  alias: (name)? @import.alias) @import

(namespace_use_declaration
  (namespace_name) @import.from
  body: (namespace_use_group
    (namespace_use_clause
      .
      (name) @import.name
      alias: (name)? @import.alias) @import))

(require_expression
  (string (string_content) @import.module)) @import

(require_expression
  (binary_expression
    left: (name) @_dir
    right: (string (string_content) @import.module))
  (#eq? @_dir "__DIR__")) @import

(require_once_expression
  (string (string_content) @import.module)) @import

(require_once_expression
  (binary_expression
    left: (name) @_dir
    right: (string (string_content) @import.module))
  (#eq? @_dir "__DIR__")) @import

(include_expression
  (string (string_content) @import.module)) @import

(include_expression
  (binary_expression
    left: (name) @_dir
    right: (string (string_content) @import.module))
  (#eq? @_dir "__DIR__")) @import

(include_once_expression
  (string (string_content) @import.module)) @import

(include_once_expression
  (binary_expression
    left: (name) @_dir
    right: (string (string_content) @import.module))
  (#eq? @_dir "__DIR__")) @import

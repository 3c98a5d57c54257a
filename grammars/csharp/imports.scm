; Imports. Captures: @package (a namespace the file declares, block or file-scoped), @import
; (the directive), @import.from with @import.wildcard (`using A.B;`: the namespace's types;
; `using static A.B.C;`: the type's members), @import.module with @import.alias
; (`using X = A.B.C;`); @import.global marks a `global using`, an import of every file of the
; project.

(namespace_declaration name: (_) @package)

(file_scoped_namespace_declaration name: (_) @package)

(using_directive
  "global"? @import.global
  !name
  [(identifier) (qualified_name)] @import.from @import.wildcard) @import

(using_directive
  name: (identifier) @import.alias
  "="
  [(identifier) (qualified_name)] @import.module) @import

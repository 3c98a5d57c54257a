; Imports. Captures: @import (the `use` or `mod` item). A `use` path is @import.group (the
; whole use tree) up to the item it imports: @import.name (a name, with @import.alias for `as`),
; @import.self (`a::b::{self}`: the module itself) or @import.wildcard (the `*` of `a::*`); the
; module is the path that leads to the item (`crate::{store::{self, Store}}` imports `Store`
; from `crate.store`), groups two deep. A single name is @import.module (`use serde;`, and
; `mod store;`: the module file declared here). Inline modules are read as part of their file,
; whose names they already see: their `use super::…` and `use self::…` are left out.

(mod_item
  name: (identifier) @import.module
  !body) @import

; An inline module (`mod tests { … }`) is read as part of its file: a path through its name
; (`crate::tests::TempDir`) stays in the file. Its name is captured as a @package of the file.
(mod_item
  name: (identifier) @package
  body: (declaration_list))

; `extern crate a as b;` binds the crate `a` as `b` (a `pub` one re-exports it: `grep::searcher`).
(source_file
  (extern_crate_declaration
    name: (identifier) @import.module
    alias: (identifier)? @import.alias) @import)

(source_file
  (use_declaration
    argument: [(identifier) @import.module
     (use_as_clause path: (identifier) @import.module alias: (identifier) @import.alias)
     (scoped_identifier name: (identifier) @import.name)
     (use_as_clause
       path: (scoped_identifier name: (identifier) @import.name)
       alias: (identifier) @import.alias)
     (use_wildcard "*" @import.wildcard)
     (scoped_use_list list: (use_list [(identifier) @import.name
        (scoped_identifier name: (identifier) @import.name)
        (use_as_clause
          path: [(identifier) @import.name (scoped_identifier name: (identifier) @import.name)]
          alias: (identifier) @import.alias)
        (self) @import.self
        (use_as_clause path: (self) @import.self alias: (identifier) @import.alias)
        (use_wildcard "*" @import.wildcard)]))
     (scoped_use_list list: (use_list (scoped_use_list list: (use_list [(identifier) @import.name
        (scoped_identifier name: (identifier) @import.name)
        (use_as_clause
          path: [(identifier) @import.name (scoped_identifier name: (identifier) @import.name)]
          alias: (identifier) @import.alias)
        (self) @import.self
        (use_as_clause path: (self) @import.self alias: (identifier) @import.alias)
        (use_wildcard "*" @import.wildcard)]))))] @import.group) @import)

(block
  (use_declaration
    argument: [(identifier) @import.module
     (use_as_clause path: (identifier) @import.module alias: (identifier) @import.alias)
     (scoped_identifier name: (identifier) @import.name)
     (use_as_clause
       path: (scoped_identifier name: (identifier) @import.name)
       alias: (identifier) @import.alias)
     (use_wildcard "*" @import.wildcard)
     (scoped_use_list list: (use_list [(identifier) @import.name
        (scoped_identifier name: (identifier) @import.name)
        (use_as_clause
          path: [(identifier) @import.name (scoped_identifier name: (identifier) @import.name)]
          alias: (identifier) @import.alias)
        (self) @import.self
        (use_as_clause path: (self) @import.self alias: (identifier) @import.alias)
        (use_wildcard "*" @import.wildcard)]))
     (scoped_use_list list: (use_list (scoped_use_list list: (use_list [(identifier) @import.name
        (scoped_identifier name: (identifier) @import.name)
        (use_as_clause
          path: [(identifier) @import.name (scoped_identifier name: (identifier) @import.name)]
          alias: (identifier) @import.alias)
        (self) @import.self
        (use_as_clause path: (self) @import.self alias: (identifier) @import.alias)
        (use_wildcard "*" @import.wildcard)]))))] @import.group) @import)

(mod_item
  body: (declaration_list
    (use_declaration
      argument: [(identifier) @import.module
     (use_as_clause path: (identifier) @import.module alias: (identifier) @import.alias)
     (scoped_identifier name: (identifier) @import.name)
     (use_as_clause
       path: (scoped_identifier name: (identifier) @import.name)
       alias: (identifier) @import.alias)
     (use_wildcard "*" @import.wildcard)
     (scoped_use_list list: (use_list [(identifier) @import.name
        (scoped_identifier name: (identifier) @import.name)
        (use_as_clause
          path: [(identifier) @import.name (scoped_identifier name: (identifier) @import.name)]
          alias: (identifier) @import.alias)
        (self) @import.self
        (use_as_clause path: (self) @import.self alias: (identifier) @import.alias)
        (use_wildcard "*" @import.wildcard)]))
     (scoped_use_list list: (use_list (scoped_use_list list: (use_list [(identifier) @import.name
        (scoped_identifier name: (identifier) @import.name)
        (use_as_clause
          path: [(identifier) @import.name (scoped_identifier name: (identifier) @import.name)]
          alias: (identifier) @import.alias)
        (self) @import.self
        (use_as_clause path: (self) @import.self alias: (identifier) @import.alias)
        (use_wildcard "*" @import.wildcard)]))))] @import.group) @import)
  (#not-match? @import.group "^(super|self)\\b"))

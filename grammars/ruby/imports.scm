; Imports. Captures: @import (the call), @import.module (what is required). `require_relative`'s
; argument is captured with its quotes (`'storage/disk'`): that is how the module system tells
; a path relative to the file from `require`'s load-path name (`mygem/client`).

(call
  method: (identifier) @_require
  arguments: (argument_list
    .
    (string (string_content) @import.module)
    .)
  (#eq? @_require "require")) @import

(call
  method: (identifier) @_require
  arguments: (argument_list
    .
    (string (string_content)) @import.module
    .)
  (#eq? @_require "require_relative")) @import

; Includes. Captures: @import (the directive), @import.module (the path: `x/y.h` from
; `#include "x/y.h"`, `<x/y.h>` with its brackets from `#include <x/y.h>`, which tells the
; includes module system not to look beside the including file first). An include binds no
; name: C's names are the program's (the linker's rule).

(preproc_include
  path: (string_literal (string_content) @import.module)) @import

(preproc_include
  path: (system_lib_string) @import.module) @import

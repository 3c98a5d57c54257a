; State writes. None in C: a write through a pointer (`s->fd = fd`) cannot be told from the
; initialisation of a structure the function just made without following values, and a write
; to a file-scope variable cannot be told from a local's by its shape; cairn does not guess.

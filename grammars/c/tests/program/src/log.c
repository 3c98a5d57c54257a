#include <stdio.h>
#include <stdlib.h>
#include <lib/log.h>

void log_line(const char *msg) {
  if (getenv("QUIET") == NULL) {
    printf("%s\n", msg);
  }
}

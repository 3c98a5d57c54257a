#include <stdio.h>
#include <sys/socket.h>
#include <lib/log.h>
#include "store.h"

int main(void) {
  int (*cb)(int) = store_get;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  LOG("starting");
  log_line("started");
  printf("%d\n", store_get(store_key(1)) + cb(2));
  /* Two files define a static open_store: neither is this file's. */
  return open_store() + fd;
}

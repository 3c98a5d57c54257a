#include <stdio.h>
#include "store.h"

/* The same static name as cache.c's: each binds only in its own file. */
static int open_store(void) {
  FILE *f = fopen("store.db", "r");
  return f != NULL;
}

int store_get(int key) {
  return open_store() + store_key(key);
}

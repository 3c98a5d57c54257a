#include "../src/store.h"

int test_store_get(void) {
  return store_get(1) == 2;
}

#include <time.h>

static int open_store(void) {
  return (int)time(NULL);
}

int cache_get(int key) {
  return open_store() + key;
}

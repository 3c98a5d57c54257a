#include "../src/server.hpp"

int test_handle() {
  Server server(1);
  server.handle(3);
  return 0;
}

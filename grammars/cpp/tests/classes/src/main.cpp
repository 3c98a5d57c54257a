#include <chrono>

#include "server.hpp"

int main() {
  Server server(8080);
  Server *other = new Server(9090);
  server.run();
  other->handle(2);
  app::Worker *worker = other;
  worker->start();
  store::Store::open_default();
  // Namespaces are not followed yet: store::open() stays unresolved, and a bare open() names
  // two functions (store's and billing's), neither in scope here; so does flush(), though
  // store's is defined as store::flush.
  store::open();
  open();
  flush();
  auto now = std::chrono::system_clock::now();
  return 0;
}

#include "store.hpp"

#include <fstream>

namespace store {

Store::Store() : hits_(0) { hits_ = 0; }

int Store::get(int key) {
  hits_++;
  return key + open();
}

Store *Store::open_default() { return new Store(); }

int open() {
  std::ofstream out("store.log");
  out.write("opened\n", 7);
  return 1;
}

}  // namespace store

// Defined outside its namespace's block: the qualifier is no class.
int store::flush() { return 0; }

#pragma once

namespace store {

class Store {
 public:
  Store();
  int get(int key);
  static Store *open_default();

 private:
  int hits_;
};

int open();
int flush();

}  // namespace store

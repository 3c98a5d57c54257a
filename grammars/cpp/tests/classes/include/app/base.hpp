#pragma once

namespace app {

class Worker {
 public:
  virtual int run() = 0;
  int start() { return run(); }
};

}  // namespace app

#pragma once

#include <app/base.hpp>

#include "logger.hpp"
#include "store.hpp"

class Server : public app::Worker {
 public:
  explicit Server(int port);
  int run() override;
  void handle(int key);

 private:
  int port_;
  store::Store store_;
  Logger *logger_;
};

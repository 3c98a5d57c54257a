#include "server.hpp"

#include <cstdlib>

Server::Server(int port) : port_(port) { this->port_ = port; }

int Server::run() {
  handle(1);
  return this->port_;
}

void Server::handle(int key) {
  this->port_ = key;
  this->store_.get(key);
  logger_->log("handled");
  std::system("true");
}

#include <random>

namespace billing {

// The same name as store::open: each namespace's calls bind their own file's.
int open() {
  std::random_device rd;
  return static_cast<int>(rd());
}

int flush() { return 0; }

int charge(int amount) { return amount + open() + flush(); }

}  // namespace billing

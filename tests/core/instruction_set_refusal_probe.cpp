// A program built with host/core/instruction_set.cpp for an instruction set that needs a feature no
// CPU has (tests/core/CMakeLists.txt): its CPU check must refuse it before main runs, naming the
// feature, with exit status 1.
#include <cstdio>

int main() {
  std::puts("instruction_set_refusal_probe: main ran");
  return 0;
}

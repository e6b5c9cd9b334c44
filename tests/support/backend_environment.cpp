// backend_environment.cpp — linked into every GoogleTest binary that uses test_backend.hpp:
// says before the first test which compiler the suite compiles with, and why.
#include <cstdio>

#include "gtest_backend.hpp"

namespace kcache::test {

void BackendEnvironment::SetUp() {
  std::printf("[ backend  ] compile backend: %s\n", backend().describe().c_str());
  std::printf("[ backend  ] NVRTC: %s; hiprtc: %s\n",
              nvrtc().ok ? nvrtc().library.c_str() : nvrtc().why.c_str(),
              hiprtc().ok ? "available" : hiprtc().why.c_str());
  std::fflush(stdout);
}

namespace {
// gtest_main runs RUN_ALL_TESTS; registering from a static initializer needs no main of ours.
[[maybe_unused]] ::testing::Environment* const registered =
    ::testing::AddGlobalTestEnvironment(new BackendEnvironment);
}  // namespace

}  // namespace kcache::test

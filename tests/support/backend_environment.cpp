// backend_environment.cpp — linked into every GoogleTest binary that uses test_backend.hpp:
// says before the first test which compiler the suite compiles with, and why.
#include <cstdio>
#include <string>
#include <utility>

#include "gtest_backend.hpp"

namespace kcache::test {

void BackendEnvironment::SetUp() {
  std::printf("[ backend  ] compile backend: %s\n", backend().describe().c_str());
  for (const auto& [label, a] : {std::pair{"NVRTC", &nvrtc()}, std::pair{"hiprtc", &hiprtc()}})
    std::printf("[ backend  ] %s\n",  // `why` names the compiler already
                (a->ok ? std::string(label) + ": available" +
                              (a->library.empty() ? "" : " (" + a->library + ")") : a->why).c_str());
  std::fflush(stdout);
}

namespace {
// gtest_main runs RUN_ALL_TESTS; registering from a static initializer needs no main of ours.
[[maybe_unused]] ::testing::Environment* const registered =
    ::testing::AddGlobalTestEnvironment(new BackendEnvironment);
}  // namespace

}  // namespace kcache::test

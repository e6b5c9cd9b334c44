// gtest_backend.hpp — GoogleTest spellings of test_backend.hpp: skip a test that needs one
// particular compiler, with the reason printed; print the suite's backend once at start.
#pragma once

#include <gtest/gtest.h>

#include "test_backend.hpp"

// Skips the current test (GTEST_SKIP) unless the real NVRTC works here.
#define KC_REQUIRE_NVRTC()                                                    \
  do {                                                                        \
    if (!::kcache::test::nvrtc().ok)                                          \
      GTEST_SKIP() << "needs NVRTC, not available: " << ::kcache::test::nvrtc().why; \
  } while (0)

// Skips the current test unless the real hiprtc compiles here.
#define KC_REQUIRE_HIPRTC()                                                   \
  do {                                                                        \
    if (!::kcache::test::hiprtc().ok)                                         \
      GTEST_SKIP() << "needs hiprtc, not available: " << ::kcache::test::hiprtc().why; \
  } while (0)

namespace kcache::test {

// Registered by the suites' main through ::testing::AddGlobalTestEnvironment (see
// backend_environment.cpp): prints "compile backend: …" before the first test.
class BackendEnvironment : public ::testing::Environment {
 public:
  void SetUp() override;
};

}  // namespace kcache::test

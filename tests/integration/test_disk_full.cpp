// Publishing into a full filesystem: the request fails with a clear error, no partial object
// is left behind, and the daemon keeps serving what it has. The cache lives on a 2 MiB tmpfs
// mounted in a private mount namespace (root and unshare needed; skipped otherwise).
#include <unistd.h>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

using DiskFull = DaemonFixture;

// A module with a 4 MiB initialized device array: its cubin cannot fit in 2 MiB.
const char* const kHugeSource =
    "// KCACHE_FAKE_BYTES=4194304 (the compiler double's stand-in for the array)\n"
    "__device__ char big[4 << 20] = {1, 2, 3};\n"
    "extern \"C\" __global__ void touch(char* out) { out[0] = big[threadIdx.x]; }\n";

TEST_F(DiskFull, PublishIntoAFullDiskFailsCleanlyAndHitsGoOn) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  if (run_command({"/usr/bin/unshare", "--mount", "true"}).exit_code != 0)
    GTEST_SKIP() << "no mount namespaces here";
  launcher_ = {"/usr/bin/unshare", "--mount", "--", "/bin/sh", "-c",
               "mkdir -p \"$CACHE\" && mount --make-rprivate / && mount -t tmpfs -o size=2m tmpfs \"$CACHE\" && exec \"$@\"",
               "sh"};
  start({}, {"CACHE=" + cache_dir_});
  Client c = client();
  const std::string small = module_source(21);
  Request r;
  r.name = "small";
  r.target = backend().target;
  r.source = small;
  auto first = c.get(r);
  ASSERT_TRUE(first.ok()) << first.error().message;

  Request huge;
  huge.name = "huge";
  huge.target = backend().target;
  huge.source = kHugeSource;
  auto full = c.get(huge);
  ASSERT_FALSE(full.ok()) << "a 4 MiB module fit in a 2 MiB filesystem?";
  EXPECT_EQ(full.error().code, Errc::io) << full.error().message;
  EXPECT_NE(full.error().message.find("No space left on device"), std::string::npos)
      << full.error().message;

  // Nothing half-written stays, and what was there is still served.
  const CommandResult verify = kcachectl({"verify", "--json"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_EQ(status()["cache"]["entries"].get<int>(), 1);
  auto again = c.get(r);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->origin, Origin::hit);
}

}  // namespace
}  // namespace kcache::test

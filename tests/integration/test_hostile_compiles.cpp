// Compile requests as an attacker writes them: options that would load the caller's code or
// write files where it chooses, includes of the daemon's files. Each is refused before any
// compile starts (or finds nothing), nothing appears on disk, and the daemon serves on.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon_fixture.hpp"
#include "gtest_backend.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
using HostileCompiles = DaemonFixture;

// After an attack: a normal compile still works.
void expect_serving(Client& c) {
  Module m = compile_module(c, 41);
  EXPECT_FALSE(m.path.empty());
}

TEST_F(HostileCompiles, OptionsThatLoadCodeOrWriteFilesAreRefusedBeforeAnyCompile) {
  start();
  Client c = client();
  const std::string source = cuda_source(1);
  const std::string planted = dir_ + "/planted";
  const std::pair<const char*, std::string> attacks[] = {
      {"gfx90a", "-fplugin=" + dir_ + "/evil.so"},   {"gfx90a", "-Xclang"},
      {"gfx90a", "-mllvm"},                           {"gfx90a", "-Wl,-o," + planted},
      {"sm_90a", "-time=" + planted},                 {"sm_90a", "--create-pch=" + planted},
      {"sm_90a", "--fdevice-time-trace=" + planted},  {"sm_90a", "--pre-include=/etc/passwd"},
      {"sm_90a", "-include"},                         {"sm_90a", "-split-compile=0"},
  };
  for (const auto& [target, option] : attacks) {
    const std::string_view options[] = {option, "/etc/passwd"};
    Request r = cuda_request("attack", source, target);  // any target: the options are refused first
    r.options = options;
    auto refused = c.get(r);
    ASSERT_FALSE(refused.ok()) << option;
    EXPECT_EQ(refused.error().code, Errc::invalid_argument) << option;
    EXPECT_NE(refused.error().message.find("'" + option + "' is not allowed"), std::string::npos)
        << refused.error().message;
  }
  EXPECT_FALSE(fs::exists(planted));
  EXPECT_EQ(stat("compiles"), 0u) << "a refused request started a compile";
  expect_serving(c);
}

TEST_F(HostileCompiles, IncludesOfTheDaemonsFilesAreRefusedNamingTheDirective) {
  start();
  Client c = client();
  const std::string tail = "\n" + cuda_source(2);
  for (const std::string head : {"#include \"/etc/passwd\"", "#include </etc/shadow>",
                                 "#include \"../../../../../../etc/passwd\"",
                                 "#define F \"/etc/passwd\"\n#include F",
                                 "#if __has_include(\"/root/.ssh/id_rsa\")\n#endif",
                                 "%:include \"/etc/passwd\"", "#inc\\\nlude \"/etc/passwd\""}) {
    const std::string source = head + tail;
    auto refused = c.get(cuda_request("reads", source));
    ASSERT_FALSE(refused.ok()) << head;
    EXPECT_EQ(refused.error().code, Errc::invalid_argument) << head;
    EXPECT_NE(refused.error().message.find("source: '"), std::string::npos) << refused.error().message;
    EXPECT_EQ(refused.error().log.find("root:"), std::string::npos);
  }
  const std::string source = "#include \"x.h\"" + tail;
  const Header escaping[] = {{"../x.h", "int x;"}};
  Request r = cuda_request("reads", source);
  r.headers = escaping;
  auto refused = c.get(r);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("header name '../x.h'"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(stat("compiles"), 0u);
  expect_serving(c);
}

// A quoted include that names no request header resolves against the compile worker's working
// directory: an empty one, not the daemon's (which here holds a file the attacker names).
TEST_F(HostileCompiles, ARelativeIncludeFindsNothingInTheDaemonsWorkingDirectory) {
  KC_REQUIRE_HIPRTC();
  const std::string secret = "kcache_secret_" + std::to_string(::getpid()) + ".h";
  std::ofstream(fs::current_path() / secret) << "#define KCACHE_SECRET_FOUND 1\n";
  start();
  Client c = client();
  const std::string source = "#include \"" + secret + "\"\n" +
                             "extern \"C\" __global__ void k(float* y) { y[0] = 1.0f; }\n";
  auto got = c.get(cuda_request("relative", source, "gfx90a"));
  fs::remove(fs::current_path() / secret);
  ASSERT_FALSE(got.ok()) << "the worker read " << secret << " from the daemon's working directory";
  EXPECT_EQ(got.error().code, Errc::compile_error) << got.error().message;
  EXPECT_NE(got.error().log.find("not found"), std::string::npos) << got.error().log;
  expect_serving(c);
}

}  // namespace
}  // namespace kcache::test

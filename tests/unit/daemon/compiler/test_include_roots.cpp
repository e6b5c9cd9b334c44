#include "compiler/include_roots.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compile/option_rules.hpp"

namespace kcache::daemon {
namespace {

namespace fs = std::filesystem;

class IncludeRootsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-roots-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ + "/root/sub");
    fs::create_directories(dir_ + "/outside");
    write("root/lib.h", "#define SCALE 3.0f\n");
    write("root/sub/more.h", "#define MORE 1\n");
    write("outside/secret.h", "#define SECRET 1\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) {
    std::ofstream(dir_ + "/" + rel, std::ios::binary | std::ios::trunc) << text;
  }
  std::string dir_;
};

TEST_F(IncludeRootsTest, AllowsTheRootAndItsSubdirectoriesOnly) {
  auto roots = IncludeRoots::scan({dir_ + "/root"});
  ASSERT_TRUE(roots.ok()) << roots.error().message;
  EXPECT_TRUE(roots->allows(dir_ + "/root"));
  EXPECT_TRUE(roots->allows(dir_ + "/root/sub"));
  EXPECT_TRUE(roots->allows(dir_ + "/root/sub/../sub"));
  EXPECT_FALSE(roots->allows(dir_ + "/outside"));
  EXPECT_FALSE(roots->allows(dir_ + "/root/../outside"));
  EXPECT_FALSE(roots->allows(dir_ + "/rootless"));
  EXPECT_EQ(roots->files(), 2u);
  // A symlink inside the root that leads out of it resolves outside: refused.
  fs::create_directory_symlink(dir_ + "/outside", dir_ + "/root/escape");
  EXPECT_FALSE(roots->allows(dir_ + "/root/escape"));
}

TEST_F(IncludeRootsTest, DigestFollowsTheHeadersContent) {
  auto a = IncludeRoots::scan({dir_ + "/root"});
  ASSERT_TRUE(a.ok());
  auto same = IncludeRoots::scan({dir_ + "/root"});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(a->key_suffix(), same->key_suffix());
  write("root/sub/more.h", "#define MORE 2\n");
  auto changed = IncludeRoots::scan({dir_ + "/root"});
  ASSERT_TRUE(changed.ok());
  EXPECT_NE(a->key_suffix(), changed->key_suffix());
  EXPECT_TRUE(IncludeRoots::scan({})->key_suffix().empty());
}

TEST_F(IncludeRootsTest, MissingRootIsAnErrorNamingIt) {
  auto r = IncludeRoots::scan({dir_ + "/absent"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(dir_ + "/absent"), std::string::npos) << r.error().message;
}

TEST_F(IncludeRootsTest, IncludeOptionsPassOnlyIntoAnAllowedRoot) {
  auto roots = IncludeRoots::scan({dir_ + "/root"});
  ASSERT_TRUE(roots.ok());
  const IncludeDirCheck allow = [&](std::string_view d) { return roots->allows(d); };
  const std::string in = dir_ + "/root/sub";
  const std::string out = dir_ + "/outside";
  EXPECT_TRUE(check_compile_options("cuda", std::vector<std::string>{"-I" + in}, allow).ok());
  EXPECT_TRUE(check_compile_options("cuda", std::vector<std::string>{"-I", in, "-default-device"}, allow).ok());
  EXPECT_TRUE(check_compile_options("cuda", std::vector<std::string>{"--include-path=" + in}, allow).ok());
  EXPECT_TRUE(check_compile_options("cuda", std::vector<std::string>{"-isystem", in}, allow).ok());
  const auto refused = check_compile_options("cuda", std::vector<std::string>{"-I", out}, allow);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("include_roots"), std::string::npos) << refused.error().message;
  EXPECT_FALSE(check_compile_options("cuda", std::vector<std::string>{"-I"}, allow).ok());
  // The value of an allowed -I is consumed: it is not read as an option of its own.
  EXPECT_FALSE(check_compile_options("cuda", std::vector<std::string>{"-I" + in, "-o", "x"}, allow).ok());
  // Without roots, every include option is refused, as before.
  EXPECT_FALSE(check_compile_options("cuda", std::vector<std::string>{"-I" + in}).ok());
}

}  // namespace
}  // namespace kcache::daemon

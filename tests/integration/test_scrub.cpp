// The background scrubber finds a stored object whose bytes changed behind the daemon's back
// and drops it, so the next request rebuilds it rather than being served the damage.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

using namespace std::chrono_literals;
using Scrub = DaemonFixture;

void flip_a_bit(const std::string& path, std::streamoff at) {
  ::chmod(path.c_str(), 0644);
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  char c = 0;
  f.get(c);
  f.seekp(at);
  f.put(static_cast<char>(c ^ 0x10));
  f.close();
  ::chmod(path.c_str(), 0444);
}

TEST_F(Scrub, FlippedBitIsFoundAndTheEntryIsRebuiltByTheNextRequest) {
  start({"--scrub-rate", "64M"});
  Client c = client();
  const std::string src = module_source(11);
  const Request r = module_request("axpy", src);
  auto first = c.get(r);
  ASSERT_TRUE(first.ok()) << first.error().message;
  const std::string good = read_file(first->path);
  flip_a_bit(first->path, static_cast<std::streamoff>(good.size() / 2));

  const auto deadline = std::chrono::steady_clock::now() + 15s;
  while (stat("corrupt_objects") == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(200ms);
  ASSERT_EQ(stat("corrupt_objects"), 1u) << read_file(log_path_);
  EXPECT_EQ(status()["cache"]["entries"].get<int>(), 0);
  EXPECT_NE(read_file(log_path_).find("is corrupt"), std::string::npos);

  auto rebuilt = c.get(r);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message;
  EXPECT_EQ(rebuilt->origin, Origin::compiled);
  EXPECT_EQ(read_file(rebuilt->path), good);
}

TEST_F(Scrub, ObjectDeletedBehindTheDaemonsBackIsNoticedAndRebuilt) {
  start({"--scrub-rate", "64M"});
  Client c = client();
  const std::string src = module_source(13);
  const Request r = module_request("axpy", src);
  auto first = c.get(r);
  ASSERT_TRUE(first.ok()) << first.error().message;
  const std::string good = read_file(first->path);
  ASSERT_EQ(::unlink(first->path.c_str()), 0);
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  while (status()["cache"]["entries"].get<int>() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(200ms);
  EXPECT_EQ(status()["cache"]["entries"].get<int>(), 0) << read_file(log_path_);
  EXPECT_NE(read_file(log_path_).find("file missing"), std::string::npos);
  auto rebuilt = c.get(r);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message;
  EXPECT_EQ(rebuilt->origin, Origin::compiled);
  EXPECT_EQ(read_file(rebuilt->path), good);
}

TEST_F(Scrub, IntactObjectsAreLeftAlone) {
  start({"--scrub-rate", "64M"});
  Client c = client();
  const std::string src = module_source(12);
  const Request r = module_request("axpy", src);
  ASSERT_TRUE(c.get(r).ok());
  std::this_thread::sleep_for(3s);  // a few scrub passes
  EXPECT_EQ(stat("corrupt_objects"), 0u);
  auto again = c.get(r);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->origin, Origin::hit);
}

// Not the scrubber: the hit path itself. An object file rewritten in place or replaced by
// another file (same size, so only its inode or ctime tells) is never handed out again: the
// hit becomes a miss and the module is rebuilt, before any scrub pass ran.
TEST_F(Scrub, AnObjectReplacedBehindTheDaemonsBackIsNotServedByTheNextHit) {
  start({"--scrub-rate", "0"});
  Client c = client();
  const std::string src = module_source(17);
  const Request r = module_request("axpy", src);
  auto first = c.get(r);
  ASSERT_TRUE(first.ok()) << first.error().message;
  const std::string good = read_file(first->path);
  auto hit = c.get(r);
  ASSERT_TRUE(hit.ok()) << hit.error().message;
  EXPECT_EQ(hit->origin, Origin::hit) << "an untouched object is served";

  const std::string planted = first->path + ".planted";
  std::ofstream(planted, std::ios::binary) << std::string(good.size(), 'x');
  ASSERT_EQ(::rename(planted.c_str(), first->path.c_str()), 0);
  auto after = c.get(r);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->origin, Origin::compiled) << read_file(log_path_);
  EXPECT_EQ(read_file(after->path), good);
  EXPECT_EQ(stat("changed_objects"), 1u);
  EXPECT_NE(read_file(log_path_).find("changed since it was published"), std::string::npos);
  auto again = c.get(r);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->origin, Origin::hit) << "the rebuilt object is the published one again";
}

}  // namespace
}  // namespace kcache::test

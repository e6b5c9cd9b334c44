// Garbage collection, eviction and admin authorization through the real daemon (issue 4).
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "daemon_fixture.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;

Module get_module(Client& c, const std::string& name, int salt,
                  std::span<const std::string_view> options = {}, bool want_fd = false) {
  const std::string src = module_source(salt);
  Request r;
  r.name = name;
  r.target = backend().target;
  r.source = src;
  r.options = options;
  r.want_fd = want_fd;
  return must(c.get(r), "compiling " + name);
}

class Gc : public DaemonFixture {
 protected:
  std::vector<std::string> names_in_cache();
  nlohmann::json gc(std::vector<std::string> args);
  CommandResult as_nobody(const std::vector<std::string>& args);
};

std::vector<std::string> Gc::names_in_cache() {
  const CommandResult ls = kcachectl({"ls", "--json"});
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  std::vector<std::string> names;
  const auto doc = nlohmann::json::parse(ls.out, nullptr, false);
  EXPECT_TRUE(doc.is_object() && doc.contains("entries")) << "ls --json printed: " << ls.out;
  if (doc.is_object() && doc.contains("entries"))
    for (const auto& e : doc["entries"]) names.push_back(e["name"]);
  std::sort(names.begin(), names.end());
  return names;
}

nlohmann::json Gc::gc(std::vector<std::string> args) {
  args.insert(args.begin(), "gc");
  args.push_back("--json");
  const CommandResult r = kcachectl(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST_F(Gc, EvictsLeastRecentlyServedFirst) {
  start({"--gc-grace", "0s"});
  Client c = client();
  get_module(c, "a", 1);
  get_module(c, "b", 2);
  get_module(c, "c", 3);
  get_module(c, "a", 1);  // a is served again: b is now the least recently served
  const std::uint64_t bytes = status()["cache"]["bytes"].get<std::uint64_t>();
  const auto report = gc({"--max-size", std::to_string(bytes - 1)});
  EXPECT_EQ(report["removed_entries"], 1);
  EXPECT_EQ(report["dry_run"], false);
  EXPECT_LE(report["remaining_bytes"].get<std::uint64_t>(), bytes - 1);
  EXPECT_EQ(names_in_cache(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(stat("evictions"), 1u);
}

TEST_F(Gc, NeverEvictsWithinTheGracePeriod) {
  start();  // default grace: 60 s
  Client c = client();
  get_module(c, "a", 1);
  get_module(c, "b", 2);
  const auto report = gc({"--max-size", "0"});
  EXPECT_EQ(report["removed_entries"], 0);
  EXPECT_EQ(names_in_cache().size(), 2u);
}

TEST_F(Gc, DryRunReportsAndChangesNothing) {
  start({"--gc-grace", "0s"});
  Client c = client();
  const Module a = get_module(c, "a", 1);
  get_module(c, "b", 2);
  const auto report = gc({"--max-size", "0", "--dry-run"});
  EXPECT_EQ(report["dry_run"], true);
  EXPECT_EQ(report["removed_entries"], 2);
  EXPECT_EQ(report["remaining_entries"], 0);
  EXPECT_EQ(names_in_cache().size(), 2u);
  EXPECT_TRUE(fs::exists(a.path));
  EXPECT_EQ(stat("evictions"), 0u);
}

TEST_F(Gc, OverBudgetTriggersBackgroundCollectionToTheLowWatermark) {
  // A budget of four modules' blocks (whatever the backend's module size), low watermark (90 %)
  // three: the fifth module crosses the high watermark and GC takes the cache down to 3.
  start({"--gc-grace", "0s"});
  {
    Client first = client();
    get_module(first, "m0", 10);
  }
  const std::uint64_t per_module = status()["cache"]["bytes"].get<std::uint64_t>();
  ASSERT_GT(per_module, 0u);
  const std::uint64_t budget = 4 * per_module;
  restart({"--gc-grace", "0s", "--max-size", std::to_string(budget)});
  Client c = client();
  for (int i = 1; i < 5; ++i) get_module(c, "m" + std::to_string(i), 10 + i);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  nlohmann::json s;
  while (true) {
    s = status();
    if (!s["gc"]["running"].get<bool>() && s["cache"]["bytes"].get<std::uint64_t>() <= budget * 9 / 10)
      break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << s.dump();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(s["stats"]["evictions"].get<int>(), 2) << s.dump();
  // The two least recently served went.
  EXPECT_EQ(names_in_cache(), (std::vector<std::string>{"m2", "m3", "m4"}));
}

TEST_F(Gc, SharedObjectSurvivesUntilItsLastKeyGoes) {
  start({"--gc-grace", "0s"});
  Client c = client();
  const std::string_view unused[] = {"-DKCACHE_UNUSED_MACRO=1"};
  const Module one = get_module(c, "shared", 4);
  const Module two = get_module(c, "shared", 4, unused);  // another key, the same bytes
  ASSERT_NE(one.key, two.key);
  ASSERT_EQ(one.digest, two.digest) << "the option changed the cubin; pick a no-op option";
  EXPECT_EQ(kcachectl({"evict", one.key}).exit_code, 0);
  EXPECT_TRUE(fs::exists(one.path));  // still referenced by the second key
  EXPECT_EQ(kcachectl({"evict", two.key}).exit_code, 0);
  EXPECT_FALSE(fs::exists(one.path));
  EXPECT_EQ(kcachectl({"verify"}).exit_code, 0);
}

TEST_F(Gc, CollectionRepairsOrphans) {
  start({"--gc-grace", "0s"});
  Client c = client();
  get_module(c, "a", 1);
  const std::string orphan = cache_dir_ + "/objects/00/" + std::string(32, '0') + ".cubin";
  std::ofstream(orphan) << "stray bytes";
  std::ofstream(cache_dir_ + "/tmp/dead.tmp") << "half a module";
  gc({});
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_FALSE(fs::exists(cache_dir_ + "/tmp/dead.tmp"));
  EXPECT_EQ(names_in_cache(), (std::vector<std::string>{"a"}));
}

TEST_F(Gc, PassedFdStillReadsTheModuleAfterEviction) {
  start();
  Client c = client();
  Module m = get_module(c, "held", 6, {}, /*want_fd=*/true);
  ASSERT_TRUE(m.fd.valid());
  const std::string before = read_file(m.path);
  const CommandResult evicted = kcachectl({"evict", "--name", "held", "--force"});
  ASSERT_EQ(evicted.exit_code, 0) << evicted.err << evicted.out;
  EXPECT_FALSE(fs::exists(m.path));
  std::string bytes(m.size, '\0');
  ASSERT_EQ(::pread(m.fd.get(), bytes.data(), bytes.size(), 0), static_cast<ssize_t>(m.size));
  EXPECT_EQ(bytes, before);
}

TEST_F(Gc, EvictRespectsGraceUnlessForced) {
  start();
  Client c = client();
  get_module(c, "fresh", 7);
  const CommandResult kept = kcachectl({"evict", "--name", "fresh"});
  EXPECT_EQ(kept.exit_code, 1);
  EXPECT_NE(kept.out.find("grace"), std::string::npos) << kept.out;
  EXPECT_EQ(kcachectl({"evict", "--name", "nosuchmodule"}).exit_code, 1);
  EXPECT_EQ(kcachectl({"evict", "--name", "fresh", "--force"}).exit_code, 0);
  EXPECT_TRUE(names_in_cache().empty());
}

// A collection asked for while the previous one waits for its removals to reach the index
// used to start a second run that the first one's completion then replaced: its callers
// waited forever (found by the crash harness). Every concurrent request must be answered.
TEST_F(Gc, ConcurrentCollectionsAreEachAnswered) {
  // The standalone compiler double compiles in about a millisecond: collections overlap.
  std::vector<std::string> env = compiler_double_env();
  env.emplace_back("KCACHE_FAKE_NVRTC_REAL=none");
  start({"--gc-grace", "0s"}, env);
  constexpr int kThreads = 6;
  constexpr int kRounds = 40;
  std::atomic<int> answered{0};
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Client c = client(std::chrono::milliseconds(10'000));
      for (int i = 0; i < kRounds; ++i) {
        const int salt = 100 + t * kRounds + i;
        const std::string src = cuda_kernel_source(salt);
        Request r;
        r.name = "m" + std::to_string(salt);
        r.target = "sm_90a";
        r.source = src;
        auto got = c.get(r);
        auto gc = c.control("gc", R"({"max_size": 0})");  // removes: its removals reach the index
        if (gc) ++answered;
        const std::string failure = !got ? got.error().message : !gc ? gc.error().message : "";
        if (!failure.empty()) {
          failures[t] = failure;  // a lost run would make every later round wait its timeout
          return;
        }
      }
    });
  for (auto& th : threads) th.join();
  for (const auto& f : failures) EXPECT_EQ(f, "");
  EXPECT_EQ(answered.load(), kThreads * kRounds);
  EXPECT_EQ(kcachectl({"verify"}).exit_code, 0);
}

// Runs kcachectl as uid/gid 65534 (nobody/nogroup) with no supplementary groups.
CommandResult Gc::as_nobody(const std::vector<std::string>& args) {
  return run_command(kcachectl_as_nobody(socket_, args));
}

TEST_F(Gc, NonAdminIsRefusedAdminOperationsButMayRead) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);  // nobody must reach the socket
  start({"--socket-mode", "0666", "--gc-grace", "0s"});
  Client c = client();
  get_module(c, "a", 1);
  const CommandResult refused = as_nobody({"gc"});
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.err.find("permission denied: gc requires root"), std::string::npos) << refused.err;
  const CommandResult evict = as_nobody({"evict", "--name", "a", "--force"});
  EXPECT_EQ(evict.exit_code, 1);
  EXPECT_NE(evict.err.find("permission denied: evict"), std::string::npos) << evict.err;
  EXPECT_EQ(as_nobody({"status"}).exit_code, 0);
  EXPECT_EQ(as_nobody({"ls"}).exit_code, 0);
  EXPECT_EQ(names_in_cache().size(), 1u);
  EXPECT_NE(read_file(log_path_).find("refused gc from uid 65534"), std::string::npos);
}

TEST_F(Gc, AdminGroupMembersMayCollect) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  start({"--socket-mode", "0666", "--admin-group", "nogroup"});
  const CommandResult r = as_nobody({"gc", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace kcache::test

// Materializer (daemon/providers/materializer.hpp): prefetch is bounded in jobs and bytes, a
// request's job goes before queued prefetches, jobs are single-flight per key, and modules
// land in objects/ deduplicated by digest. The loop is driven by hand; no daemon runs.
#include "providers/materializer.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "gpu_compilers.hpp"
#include "index/index_worker.hpp"
#include "providers/manifest.hpp"

namespace kcache::daemon {
namespace {

namespace fs = std::filesystem;
constexpr std::uint64_t kMiB = 1ull << 20;

class ProviderMaterializer : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-materializer-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_EQ(uv_loop_init(&loop_), 0);
    auto store = Store::open(dir_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::make_unique<Store>(std::move(store).value());
    auto index = Index::open(dir_ + "/index.sqlite");
    ASSERT_TRUE(index.ok()) << index.error().message;
    post_ = std::make_unique<LoopPost>(&loop_);
    worker_ = std::make_unique<IndexWorker>(std::move(index).value(), *post_);
    cache_ = std::make_unique<Cache>(&loop_, *store_, *worker_, stats_, std::chrono::seconds(10));
  }

  void TearDown() override {
    if (cache_) {
      materializer_.reset();
      // Let running jobs finish: no pool job may outlive the cache.
      run_until([&] { return cache_->publishes_in_flight() == 0; });
      cache_->final_flush();
      worker_->stop();
      cache_.reset();
      worker_.reset();
      post_.reset();
      uv_run(&loop_, UV_RUN_DEFAULT);  // closes the handles
      EXPECT_EQ(uv_loop_close(&loop_), 0);
    }
    fs::remove_all(dir_);
  }

  Materializer& make(std::size_t max_jobs, std::uint64_t max_bytes) {
    materializer_ = std::make_unique<Materializer>(&loop_, *cache_, max_jobs, max_bytes);
    return *materializer_;
  }

  // Drives the loop until `done` holds; fails the test after 20 s.
  void run_until(const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done()) {
      uv_run(&loop_, UV_RUN_NOWAIT);
      if (std::chrono::steady_clock::now() > until) {
        ADD_FAILURE() << "the loop never got there";
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // A job for a module of declared `size` in provider directory `provider` (which need not
  // exist: such a job fails quickly with not_found, enough to watch the queue).
  static MaterializeJob job(const std::string& label, const std::string& provider,
                            std::uint64_t size, const std::string& bytes = {},
                            const std::string& file = "m.cubin") {
    providers::ModuleSpec m{label,
                            file,
                            *parse_target("sm_90a"),
                            size,
                            digest_of(std::string_view(bytes)),
                            providers::Compression::none};
    return {digest_of(std::string_view(label)), provider, m,
            PublishMeta{label, "sm_90a", ObjectKind::cubin, EntryOrigin::provider}};
  }

  std::string dir_;
  uv_loop_t loop_{};
  Stats stats_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<LoopPost> post_;
  std::unique_ptr<IndexWorker> worker_;
  std::unique_ptr<Cache> cache_;
  std::unique_ptr<Materializer> materializer_;
};

TEST_F(ProviderMaterializer, RunsAtMostMaxJobsAtOnce) {
  Materializer& m = make(2, 256 * kMiB);
  int finished = 0;
  for (int i = 0; i < 5; ++i)
    m.submit(job("m" + std::to_string(i), dir_ + "/nowhere", 4096), false,
             [&](const Result<Entry>&) { ++finished; });
  EXPECT_EQ(m.progress().running, 2u);
  EXPECT_EQ(m.progress().queued, 3u);
  std::size_t most = 0;
  run_until([&] {
    most = std::max(most, m.progress().running);
    return finished == 5;
  });
  EXPECT_LE(most, 2u);
  EXPECT_EQ(m.progress().failed, 5u);
  EXPECT_EQ(m.progress().queued, 0u);
}

TEST_F(ProviderMaterializer, BoundsTheDeclaredBytesInFlightBeyondTheFirstJob) {
  Materializer& m = make(2, 256 * kMiB);
  int finished = 0;
  const auto count = [&](const Result<Entry>&) { ++finished; };
  // The first job runs whatever its size; a second one that would pass the budget waits.
  m.submit(job("big", dir_ + "/nowhere", 300 * kMiB), false, count);
  m.submit(job("also-big", dir_ + "/nowhere", 200 * kMiB), false, count);
  EXPECT_EQ(m.progress().running, 1u);
  EXPECT_EQ(m.progress().queued, 1u);
  run_until([&] { return finished == 2; });
  // Small jobs within the budget run side by side.
  m.submit(job("a", dir_ + "/nowhere", 100 * kMiB), false, count);
  m.submit(job("b", dir_ + "/nowhere", 100 * kMiB), false, count);
  EXPECT_EQ(m.progress().running, 2u);
  run_until([&] { return finished == 4; });
}

TEST_F(ProviderMaterializer, ARequestGoesBeforeQueuedPrefetches) {
  Materializer& m = make(1, 256 * kMiB);
  std::vector<std::string> order;
  const auto note = [&](const std::string& label) {
    return [&order, label](const Result<Entry>&) { order.push_back(label); };
  };
  for (const char* label : {"p1", "p2", "p3", "p4"})
    m.submit(job(label, dir_ + "/nowhere", 4096), false, note(label));
  m.submit(job("request", dir_ + "/nowhere", 4096), true, note("request"));
  // A request joining a queued prefetch makes it urgent: it moves to the front too.
  m.submit(job("p4", dir_ + "/nowhere", 4096), true, note("p4-joined"));
  EXPECT_EQ(m.progress().queued, 4u);  // p2, p3, p4, request: the join is no new job
  run_until([&] { return order.size() == 6; });
  EXPECT_EQ(order, (std::vector<std::string>{"p1", "p4", "p4-joined", "request", "p2", "p3"}));
}

TEST_F(ProviderMaterializer, PublishesVerifiedModulesOnceAndDeduplicatesByDigest) {
  const auto& out = kcache::testing::nvrtc_compile("sm_90a");
  if (out.status != kcache::testing::CompileOutcome::Status::ok)
    GTEST_SKIP() << "NVRTC is needed for a real cubin: " << out.message;
  const std::string cubin(reinterpret_cast<const char*>(out.code.data()), out.code.size());
  const std::string provider = dir_ + "/provider";
  fs::create_directories(provider);
  std::ofstream(provider + "/m.cubin", std::ios::binary) << cubin;

  Materializer& m = make(2, 256 * kMiB);
  // Jobs finish in any order (two run at once): outcomes are kept per label.
  std::map<std::string, std::vector<Result<Entry>>> outcomes;
  std::size_t finished = 0;
  const auto keep = [&](const char* label) {
    return [&, label](const Result<Entry>& r) {
      outcomes[label].push_back(r);
      ++finished;
    };
  };
  // Two keys (two providers' entries) for the same bytes, and a second asker of the first.
  m.submit(job("one", provider, cubin.size(), cubin), false, keep("one"));
  m.submit(job("one", provider, cubin.size(), cubin), true, keep("one"));
  m.submit(job("two", provider, cubin.size(), cubin), false, keep("two"));
  // Bytes that do not match the declared digest are refused, never published.
  m.submit(job("wrong", provider, cubin.size(), "other bytes"), false, keep("wrong"));
  run_until([&] { return finished == 4; });

  ASSERT_EQ(outcomes["one"].size(), 2u);
  ASSERT_TRUE(outcomes["one"][0].ok()) << outcomes["one"][0].error().message;
  ASSERT_TRUE(outcomes["one"][1].ok());
  ASSERT_TRUE(outcomes["two"].at(0).ok()) << outcomes["two"][0].error().message;
  EXPECT_EQ(outcomes["one"][0]->digest, outcomes["one"][1]->digest);
  EXPECT_EQ(outcomes["one"][0]->digest, outcomes["two"][0]->digest);
  const MaterializeProgress p = m.progress();
  EXPECT_EQ(p.done, 2u);  // "one" ran once for both askers
  EXPECT_EQ(p.failed, 1u);
  EXPECT_EQ(p.bytes, 2 * cubin.size());
  ASSERT_EQ(outcomes["wrong"].size(), 1u);
  const bool refused = !outcomes["wrong"][0].ok();
  if (refused) {
    EXPECT_EQ(outcomes["wrong"][0].error().code, Errc::corrupt);
    EXPECT_NE(outcomes["wrong"][0].error().message.find("digest mismatch"), std::string::npos)
        << outcomes["wrong"][0].error().message;
  }
  EXPECT_TRUE(refused);

  const Entry* one = cache_->lookup(digest_of(std::string_view("one")));
  const Entry* two = cache_->lookup(digest_of(std::string_view("two")));
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(one->origin, EntryOrigin::provider);
  EXPECT_EQ(one->digest, digest_of(std::string_view(cubin)));
  EXPECT_EQ(cache_->path_of(*one), cache_->path_of(*two));  // one file for both
  EXPECT_EQ(cache_->lookup(digest_of(std::string_view("wrong"))), nullptr);
  std::size_t objects = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_ + "/objects"))
    objects += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(objects, 1u);
  struct stat st {};
  ASSERT_EQ(::stat(cache_->path_of(*one).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0444u);
}

TEST_F(ProviderMaterializer, ShutdownFailsQueuedJobsAndLetsRunningOnesFinish) {
  Materializer& m = make(1, 256 * kMiB);
  std::vector<Errc> codes;
  for (const char* label : {"running", "queued-1", "queued-2"})
    m.submit(job(label, dir_ + "/nowhere", 4096), false,
             [&](const Result<Entry>& r) { codes.push_back(r.ok() ? Errc::internal : r.error().code); });
  m.shutdown();
  EXPECT_EQ(codes, (std::vector<Errc>{Errc::unavailable, Errc::unavailable}));
  run_until([&] { return codes.size() == 3; });
  EXPECT_EQ(codes.back(), Errc::not_found);  // the running one ended on its own
  bool idle = false;
  m.when_idle([&] { idle = true; });
  EXPECT_TRUE(idle);
}

}  // namespace
}  // namespace kcache::daemon

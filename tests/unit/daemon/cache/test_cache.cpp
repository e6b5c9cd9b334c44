// Cache (daemon/cache/cache.hpp): an object leaves the disk only after the index batch that deletes
// its row has committed, so a kill at any moment never leaves a durable row naming a missing
// file; after_removals() answers only once the bytes are gone. The loop is driven by hand.
#include "cache/cache.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <optional>
#include <thread>

namespace kcache::daemon {
namespace {

namespace fs = std::filesystem;

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kcache-cache-XXXXXX";
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
    cache_ = std::make_unique<Cache>(&loop_, *store_, *worker_, stats_, std::chrono::seconds(60));
  }

  void TearDown() override {
    release_worker();
    if (cache_) {
      run_until([&] { return cache_->publishes_in_flight() == 0; });
      cache_->final_flush();
      worker_->stop();
      cache_.reset();
      worker_.reset();
      post_.reset();
      uv_run(&loop_, UV_RUN_DEFAULT);
      EXPECT_EQ(uv_loop_close(&loop_), 0);
    }
    fs::remove_all(dir_);
  }

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

  // Publishes `bytes` under `key` and waits until its row is in the index.
  Entry publish(const Digest128& key, const std::string& bytes) {
    std::optional<Result<Entry>> got;
    cache_->publish(key, PublishMeta{"m", "sm_90", ObjectKind::cubin, EntryOrigin::compiled},
                    bytes, [&](Result<Entry> e) { got = std::move(e); });
    run_until([&] { return got.has_value(); });
    EXPECT_TRUE(got && got->ok());
    bool flushed = false;
    cache_->after_removals([&] { flushed = true; });
    run_until([&] { return flushed; });
    return got && got->ok() ? got->value() : Entry{};
  }

  std::uint64_t rows() {
    std::optional<std::uint64_t> n;
    worker_->query<std::uint64_t>(std::function<std::uint64_t(Index&)>([](Index& index) {
                                    auto count = index.count_entries();
                                    return count.ok() ? count.value() : UINT64_MAX;
                                  }),
                                  std::function<void(std::uint64_t)>([&](std::uint64_t v) { n = v; }));
    run_until([&] { return n.has_value(); });
    return n.value_or(0);
  }

  // Holds the index worker inside a job until release_worker(), as a slow disk would.
  void hold_worker() {
    auto released = std::make_shared<std::promise<void>>();
    release_ = released;
    auto held = released->get_future().share();
    worker_->submit([held](Index&) { held.wait(); });
  }
  void release_worker() {
    if (auto r = std::exchange(release_, nullptr)) r->set_value();
  }

  std::string dir_;
  uv_loop_t loop_{};
  Stats stats_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<LoopPost> post_;
  std::unique_ptr<IndexWorker> worker_;
  std::unique_ptr<Cache> cache_;
  std::shared_ptr<std::promise<void>> release_;
};

Digest128 key_of(std::uint64_t n) { return Digest128{n, ~n}; }

TEST_F(CacheTest, ObjectStaysOnDiskUntilTheBatchDeletingItsRowHasCommitted) {
  const Digest128 key = key_of(1);
  const Entry e = publish(key, "module bytes");
  const std::string path = cache_->path_of(e);
  ASSERT_TRUE(fs::exists(path));
  ASSERT_EQ(rows(), 1u);

  hold_worker();  // the batch deleting the row cannot commit yet
  cache_->remove(key);
  bool answered = false;
  cache_->after_removals([&] { answered = true; });
  // Give a thread pool every chance to free the file behind the index's back.
  for (int i = 0; i < 200; ++i) {
    uv_run(&loop_, UV_RUN_NOWAIT);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(fs::exists(path)) << "the file went before the row that names it";
  EXPECT_FALSE(answered);

  release_worker();
  run_until([&] { return answered; });
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(rows(), 0u);
}

TEST_F(CacheTest, AfterRemovalsWithNothingScheduledStillAnswersOnTheLoop) {
  bool answered = false;
  cache_->after_removals([&] { answered = true; });
  EXPECT_FALSE(answered);  // never re-entrantly, inside the caller
  run_until([&] { return answered; });
}

TEST_F(CacheTest, ObjectSharedByTwoKeysGoesWithTheLastOne) {
  const Entry a = publish(key_of(2), "shared bytes");
  const Entry b = publish(key_of(3), "shared bytes");
  ASSERT_EQ(a.digest, b.digest);
  const std::string path = cache_->path_of(a);
  cache_->remove(key_of(2));
  bool answered = false;
  cache_->after_removals([&] { answered = true; });
  run_until([&] { return answered; });
  EXPECT_TRUE(fs::exists(path));
  EXPECT_EQ(rows(), 1u);
  cache_->remove(key_of(3));
  answered = false;
  cache_->after_removals([&] { answered = true; });
  run_until([&] { return answered; });
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(rows(), 0u);
}

}  // namespace
}  // namespace kcache::daemon

// client/client.hpp — the state behind one kcache_client handle.
//
// Contract:
//  * Thread-safe: any number of threads call get()/control() at once. Each call takes a pooled
//    connection (or opens one: connect retries, then hello), runs its exchange synchronously
//    on it and gives it back; nothing is handed between threads.
//  * A connection that breaks (EOF, EPIPE, ECONNRESET) is dropped together with the idle pool
//    and the call is retried once on a fresh connection: get and the read-only control
//    operations are idempotent; admin operations are not retried.
//  * get() sends a key-only lookup first when the canonical target is known (the device's
//    target from hello, a target hello listed, or one learned from an earlier reply — see
//    client/targets.hpp) and the daemon can take one (client/get.hpp); on need_source it sends
//    the full request on the same connection.
//  * A new connection whose hello differs from the last one seen (a different daemon) starts
//    a new generation and forgets the learned targets.
//  * With Config::fallback, a get that fails because the daemon cannot be reached
//    (Errc::disconnected) or a timeout expired, and that carries a source and an explicit
//    target, is compiled in-process (client/fallback.hpp). After an unreachable daemon, gets
//    go straight to the fallback for kDaemonRetryAfter instead of waiting out the connect
//    timeout each time. Fallback compiles are reported to the daemon (`report`) after the
//    next request it answers.
//  * control() accepts the operations of schema/wire_v1.def that exchange JSON (every opcode
//    except hello, get and compile); another name is Errc::invalid_argument naming it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "client/connection.hpp"
#include "client/fallback.hpp"
#include "client/get.hpp"
#include "client/pool.hpp"
#include "client/targets.hpp"
#include "kcache/result.hpp"
#include "wire/messages.hpp"

namespace kcache::client {

struct Config {
  std::string socket_path;  // empty: discovery (common/paths.hpp)
  Timeouts timeouts;
  bool fallback = false;  // compile in-process when the daemon is unreachable or slow
};

// The public counters (KCACHE_CLIENT_STATS in kcache.h).
struct Stats {
#define KC_STATS_FIELD(field, what) std::uint64_t field = 0;
  KCACHE_CLIENT_STATS(KC_STATS_FIELD)
#undef KC_STATS_FIELD
};

class Client {
 public:
  explicit Client(Config config) : config_(std::move(config)) {}

  Result<GetResult> get(const GetParams& params);
  Result<std::string> control(std::string_view operation, std::string_view json);
  Stats stats() const noexcept;

 private:
  // Relaxed atomics: counters for humans and tests, never for synchronization.
  struct Counters {
#define KC_STATS_COUNTER(field, what) std::atomic<std::uint64_t> field{0};
    KCACHE_CLIENT_STATS(KC_STATS_COUNTER)
#undef KC_STATS_COUNTER
  };

  template <class Exchange>
  auto with_connection(bool may_retry, Exchange&& exchange)
      -> decltype(exchange(std::declval<Connection&>()));
  Result<std::unique_ptr<Connection>> open_connection();
  std::uint64_t observe_hello(const wire::HelloReply& hello);
  Result<GetResult> get_on(Connection& conn, const GetParams& params);
  Result<GetResult> fall_back(const GetParams& params, const Error& why);
  void report_fallbacks();

  const Config config_;
  ConnectionPool pool_;
  LearnedTargets targets_;
  std::mutex hello_mu_;  // guards last_hello_ and generation_
  std::unique_ptr<wire::HelloReply> last_hello_;
  std::uint64_t generation_ = 0;
  Counters counters_;
  Fallback fallback_{counters_.fallbacks};  // counts its compiles there
  // steady_clock ticks until which the daemon is taken as down (fallback clients only).
  std::atomic<std::int64_t> daemon_down_until_{0};
  std::atomic<bool> report_due_{false};  // fallback compiles the daemon was not told of
};

}  // namespace kcache::client

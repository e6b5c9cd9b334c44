// server.hpp — the listening Unix socket and the set of client sessions.
//
// Contract (loop thread only):
//  * bind(path, mode) creates the socket (and its parent directory), refusing a path where a
//    live daemon already answers; a stale socket file is replaced. adopt(fd) uses a socket
//    systemd passed (socket activation) instead.
//  * Accepts until `max_connections`; beyond it new connections are closed at once (and
//    logged once per burst) so existing clients keep their latency.
//  * At most `max_connections_per_uid` sessions per peer uid: one runaway process (or user)
//    cannot take every slot. Beyond it, that uid's new connections are closed at once.
//  * A sweep every second closes, with a logged reason: a session that has not completed its
//    hello, or a started frame, within `frame_timeout` (slow-loris); one whose replies have
//    not moved for `stall_timeout` (a client that never reads); one with nothing pending and
//    no traffic for `idle_timeout` (libkcache reconnects transparently).
//  * Sessions share loop turns and frame memory through budget() (turn_budget.hpp).
//  * close() stops accepting, closes every session and removes the socket file it created.
#pragma once

#include <cstdint>
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/fd.hpp"
#include "server/turn_budget.hpp"
#include "loop/uv.hpp"

namespace kcache::daemon {

class Daemon;
class Session;

class Server {
 public:
  Server(uv_loop_t* loop, Daemon& daemon, std::uint32_t max_frame)
      : loop_(loop), daemon_(daemon), budget_(loop, max_frame) {}
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  Status bind(const std::string& path, std::uint32_t mode, std::optional<gid_t> group = std::nullopt);
  Status adopt(int fd);
  Status start();
  void close();

  const std::string& path() const noexcept { return path_; }
  std::size_t sessions() const noexcept { return sessions_.size(); }
  void forget(std::uint64_t session_id);
  TurnBudget& budget() noexcept { return budget_; }

 private:
  void on_readable();
  void sweep();

  uv_loop_t* loop_;
  Daemon& daemon_;
  Fd listen_fd_;
  UvHandle<uv_poll_t> poll_;
  std::string path_;
  bool owns_path_ = false;
  std::uint64_t next_id_ = 1;
  bool refusing_ = false;
  std::unordered_map<std::uint64_t, std::shared_ptr<Session>> sessions_;
  std::unordered_map<uid_t, std::size_t> per_uid_;
  UvHandle<uv_timer_t> sweep_timer_;
  bool refusing_uid_logged_ = false;
  TurnBudget budget_;
};

}  // namespace kcache::daemon

// client/pool.hpp — the idle connections of one client handle.
//
// Contract: a thread takes an idle connection (or nullptr: it then opens one itself), uses it
// for one request synchronously and gives it back. A broken connection given back is closed,
// never pooled. Thread-safe; the critical sections are a vector push/pop, so the hit path
// pays one uncontended mutex and no cross-thread handoff.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "client/connection.hpp"

namespace kcache::client {

class ConnectionPool {
 public:
  // Idle connections kept beyond this are closed: a burst of threads must not pin sockets
  // (and daemon connection slots) forever.
  static constexpr std::size_t kMaxIdle = 64;

  // The most recently used idle connection (its buffers are warm), or nullptr.
  std::unique_ptr<Connection> take();
  void give_back(std::unique_ptr<Connection> conn);
  // Closes every idle connection (after one broke: the others likely share its fate).
  void clear();

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace kcache::client

#include "client/pool.hpp"

#include <utility>

namespace kcache::client {

std::unique_ptr<Connection> ConnectionPool::take() {
  std::lock_guard lock(mu_);
  if (idle_.empty()) return nullptr;
  std::unique_ptr<Connection> conn = std::move(idle_.back());
  idle_.pop_back();
  return conn;
}

void ConnectionPool::give_back(std::unique_ptr<Connection> conn) {
  if (!conn || conn->broken()) return;  // `conn` closes it, outside the lock
  {
    std::lock_guard lock(mu_);
    if (idle_.size() < kMaxIdle) {
      idle_.push_back(std::move(conn));
      return;
    }
  }
  // The pool is full: `conn` closes this one after the lock is released.
}

void ConnectionPool::clear() {
  std::vector<std::unique_ptr<Connection>> closing;
  {
    std::lock_guard lock(mu_);
    closing.swap(idle_);
  }
  // `closing` closes its sockets here, after the lock is released.
}

}  // namespace kcache::client

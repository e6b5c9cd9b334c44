// fair_queue.hpp — compile jobs waiting for a worker, served fairly across the users who
// asked (docs/reliability.md, "Fair and bounded service").
//
// Contract (single thread; the worker pool's):
//  * push(uid, item) queues item behind that uid's earlier ones, or returns false (dropping
//    item: ask full(uid) first to keep it and answer busy) when the uid already has
//    `max_per_uid` queued. One user cannot fill
//    the daemon's memory with queued compiles, however many connections it opens.
//  * next(may_start) takes the oldest item of the next uid in turn (round robin over the
//    uids with queued items, starting after the uid served last) among those for which
//    may_start(uid) holds; nullopt when none. So 100 queued jobs of one uid delay another
//    uid's job by at most one turn, not 100.
//  * take_if(drop) removes the items drop() selects (cancelled jobs); take_all() empties the
//    queue (shutdown), lowest uid first.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace kcache::daemon {

template <class T>
class FairQueue {
 public:
  explicit FairQueue(std::size_t max_per_uid) : max_per_uid_(max_per_uid) {}

  bool full(uid_t uid) const {
    const auto it = queues_.find(uid);
    return max_per_uid_ == 0 || (it != queues_.end() && it->second.size() >= max_per_uid_);
  }

  bool push(uid_t uid, T item) {
    if (full(uid)) return false;
    queues_[uid].push_back(std::move(item));
    ++size_;
    return true;
  }

  std::optional<T> next(const std::function<bool(uid_t)>& may_start) {
    if (queues_.empty()) return std::nullopt;
    // The uids after the last one served, then from the start up to and including it.
    auto it = last_ ? queues_.upper_bound(*last_) : queues_.begin();
    for (std::size_t seen = 0; seen < queues_.size(); ++seen, ++it) {
      if (it == queues_.end()) it = queues_.begin();
      if (!may_start(it->first)) continue;
      const uid_t uid = it->first;
      T item = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) queues_.erase(it);
      --size_;
      last_ = uid;
      return item;
    }
    return std::nullopt;
  }

  // Removes and returns every item for which drop(item) holds, keeping the others' order.
  std::vector<T> take_if(const std::function<bool(const T&)>& drop) {
    std::vector<T> taken;
    for (auto it = queues_.begin(); it != queues_.end();) {
      auto& q = it->second;
      for (auto item = q.begin(); item != q.end();) {
        if (drop(*item)) {
          taken.push_back(std::move(*item));
          item = q.erase(item);
          --size_;
        } else {
          ++item;
        }
      }
      it = q.empty() ? queues_.erase(it) : std::next(it);
    }
    return taken;
  }

  std::vector<T> take_all() {
    std::vector<T> all;
    for (auto& [uid, q] : queues_)
      for (auto& item : q) all.push_back(std::move(item));
    queues_.clear();
    size_ = 0;
    return all;
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::size_t max_per_uid() const noexcept { return max_per_uid_; }

 private:
  std::size_t max_per_uid_;
  std::map<uid_t, std::deque<T>> queues_;
  std::optional<uid_t> last_;
  std::size_t size_ = 0;
};

}  // namespace kcache::daemon

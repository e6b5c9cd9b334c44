// turn_budget.hpp — how much of each event-loop turn, and of the daemon's memory for frames
// still arriving, one peer uid may use: a user's flood of cheap requests (pipelined status)
// or of half-sent frames cannot hold the loop or the heap that serve everyone's hits.
//
// Contract (loop thread only):
//  * A turn ends at the loop's check phase (after the I/O callbacks); every uid's time then
//    starts again from zero and turn() advances.
//  * may_run(uid) is true while `uid` has used less than kUidTimePerTurn of this turn, or
//    when no other uid has run for kContendedForMs (work-conserving: a worker pool of one
//    uid is not slowed to protect nobody); charge(uid, ns) books loop time spent on its
//    behalf. One frame may overshoot (it is checked before, timed after), so a uid's share
//    is its budget plus one request.
//  * defer(s, ran) queues a session whose frames wait for a later turn. At the next turn's
//    start (idle phase, before I/O) each queued session is resumed once, in queue order. One
//    that had frames this turn goes to the back; one that got none (its uid's share was spent
//    by another of its connections) to the front, so connections of one uid take turns too.
//  * add_buffered(uid, delta) tracks bytes held in frames not yet complete; buffered_ok(uid)
//    is false once they pass buffered_cap() (the greater of 256 MiB and 4 × max_frame).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>

#include "kcache/result.hpp"
#include "loop/uv.hpp"

namespace kcache::daemon {

class Session;

class TurnBudget {
 public:
  static constexpr std::uint64_t kUidTimePerTurn = 50'000;  // ns
  // How long after two uids last took turns the budget still holds: with one uid alone
  // there is nobody to be fair to, and it gets the whole loop.
  static constexpr std::uint64_t kContendedForMs = 10;
  // Frames one connection hands over per turn, whatever its uid's budget.
  static constexpr std::uint32_t kFramesPerTurn = 16;

  TurnBudget(uv_loop_t* loop, std::uint32_t max_frame);
  Status start();
  void stop();

  std::uint64_t turn() const noexcept { return turn_; }
  bool may_run(uid_t uid) const noexcept;
  void charge(uid_t uid, std::uint64_t ns);
  void defer(std::weak_ptr<Session> session, bool ran_this_turn);

  void add_buffered(uid_t uid, std::int64_t delta);
  bool buffered_ok(uid_t uid) const noexcept;
  std::size_t buffered_cap() const noexcept { return buffered_cap_; }

 private:
  void end_turn();
  void resume_deferred();

  uv_loop_t* loop_;
  std::size_t buffered_cap_;
  UvHandle<uv_check_t> check_;
  UvHandle<uv_idle_t> idle_;
  std::uint64_t turn_ = 1;
  std::unordered_map<uid_t, std::uint64_t> spent_;  // ns this turn, only uids that ran
  uid_t last_charged_ = 0;
  bool charged_any_ = false;
  std::uint64_t contended_until_ms_ = 0;  // loop time until which the budget holds
  std::unordered_map<uid_t, std::size_t> buffered_;
  std::deque<std::weak_ptr<Session>> deferred_;
};

}  // namespace kcache::daemon

#include "server/turn_budget.hpp"

#include <algorithm>

#include "loop/contain.hpp"
#include "server/session.hpp"

namespace kcache::daemon {

namespace {
constexpr std::size_t kMinBufferedCap = 256u << 20;
}  // namespace

TurnBudget::TurnBudget(uv_loop_t* loop, std::uint32_t max_frame)
    : loop_(loop), buffered_cap_(std::max<std::size_t>(kMinBufferedCap, 4 * std::size_t{max_frame})) {}

Status TurnBudget::start() {
  check_ = UvHandle<uv_check_t>::make();
  int rc = uv_check_init(loop_, check_.get());
  if (rc != 0) return uv_error("uv_check_init", rc);
  check_->data = this;
  rc = uv_check_start(check_.get(), [](uv_check_t* h) {
    if (h->data != nullptr) contain("TurnBudget::end_turn", [&] { static_cast<TurnBudget*>(h->data)->end_turn(); });
  });
  if (rc != 0) return uv_error("uv_check_start", rc);
  uv_unref(check_.handle());
  idle_ = UvHandle<uv_idle_t>::make();
  rc = uv_idle_init(loop_, idle_.get());
  if (rc != 0) return uv_error("uv_idle_init", rc);
  idle_->data = this;
  uv_unref(idle_.handle());
  return {};
}

void TurnBudget::stop() {
  check_.reset();
  idle_.reset();
  deferred_.clear();
}

bool TurnBudget::may_run(uid_t uid) const noexcept {
  const auto it = spent_.find(uid);
  if (it == spent_.end() || it->second < kUidTimePerTurn) return true;
  return uv_now(loop_) >= contended_until_ms_;  // nobody else has asked lately
}

void TurnBudget::charge(uid_t uid, std::uint64_t ns) {
  spent_[uid] += ns;
  // Two uids taking turns is contention: the budget holds for a while after each switch.
  if (charged_any_ && uid != last_charged_) contended_until_ms_ = uv_now(loop_) + kContendedForMs;
  last_charged_ = uid;
  charged_any_ = true;
}

void TurnBudget::defer(std::weak_ptr<Session> session, bool ran_this_turn) {
  if (ran_this_turn)
    deferred_.push_back(std::move(session));
  else
    deferred_.push_front(std::move(session));
  if (idle_ && uv_is_active(idle_.handle()) == 0)
    uv_idle_start(idle_.get(), [](uv_idle_t* h) {
      if (h->data != nullptr) contain("TurnBudget::resume_deferred", [&] { static_cast<TurnBudget*>(h->data)->resume_deferred(); });
    });
}

void TurnBudget::end_turn() {
  spent_.clear();
  ++turn_;
}

void TurnBudget::resume_deferred() {
  // Only the sessions queued before this turn: one that defers again waits for the next.
  std::deque<std::weak_ptr<Session>> due;
  due.swap(deferred_);
  for (auto& weak : due)
    if (auto s = weak.lock()) s->resume();
  if (deferred_.empty() && idle_) uv_idle_stop(idle_.get());
}

void TurnBudget::add_buffered(uid_t uid, std::int64_t delta) {
  auto& held = buffered_[uid];
  held = delta < 0 ? held - std::min<std::size_t>(held, static_cast<std::size_t>(-delta))
                   : held + static_cast<std::size_t>(delta);
  if (held == 0) buffered_.erase(uid);
}

bool TurnBudget::buffered_ok(uid_t uid) const noexcept {
  const auto it = buffered_.find(uid);
  return it == buffered_.end() || it->second <= buffered_cap_;
}

}  // namespace kcache::daemon

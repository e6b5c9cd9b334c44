// pause_gate.hpp — how the harness holds its background load (client threads, provider churn)
// still between a kill and the restart checks.
//
// Contract: a worker brackets each step with enter()/leave(). enter() blocks while the gate is
// paused and returns false once it is stopped (the worker then exits); every true enter() is
// matched by one leave(). pause() returns when no worker is inside a step; resume() lets them
// run again; stop() wakes everyone for good. sleep_for() is a worker's wait between steps,
// cut short by stop() (it then returns false). A gate starts paused.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace kcache::crash {

class PauseGate {
 public:
  bool enter() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return stopping_ || !paused_; });
    if (stopping_) return false;
    ++active_;
    return true;
  }

  void leave() {
    {
      const std::lock_guard lock(mutex_);
      --active_;
    }
    cv_.notify_all();
  }

  bool sleep_for(std::chrono::milliseconds delay) {
    std::unique_lock lock(mutex_);
    return !cv_.wait_for(lock, delay, [this] { return stopping_; });
  }

  void pause() {
    std::unique_lock lock(mutex_);
    paused_ = true;
    cv_.wait(lock, [this] { return active_ == 0; });
  }

  void resume() { set([this] { paused_ = false; }); }
  void stop() { set([this] { stopping_ = true; }); }

 private:
  template <class F>
  void set(F change) {
    {
      const std::lock_guard lock(mutex_);
      change();
    }
    cv_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  bool paused_ = true;
  bool stopping_ = false;
  int active_ = 0;
};

}  // namespace kcache::crash

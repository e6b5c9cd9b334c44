// uv.hpp — RAII and small utilities over libuv.
//
// Contract:
//  * `UvHandle<T>` owns a heap-allocated uv handle. Destruction calls uv_close(); the memory
//    is freed in the close callback (a uv handle must outlive uv_close's completion). After
//    destruction no callback of the handle runs again.
//  * `LoopPost` lets any thread queue a closure to run on the loop thread (uv_async).
//  * `run_in_pool(loop, work, after)` runs `work` on libuv's thread pool and then `after` on
//    the loop thread. `work` must not touch loop-owned state.
#pragma once

#include <uv.h>

#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kcache/result.hpp"

namespace kcache::daemon {

Error uv_error(const std::string& what, int rc);

template <class T>
class UvHandle {
 public:
  UvHandle() = default;
  // Allocates the handle; the caller runs uv_<type>_init on get().
  static UvHandle make() {
    UvHandle h;
    h.h_ = new T{};
    return h;
  }
  ~UvHandle() { reset(); }
  UvHandle(UvHandle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  UvHandle& operator=(UvHandle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  UvHandle(const UvHandle&) = delete;
  UvHandle& operator=(const UvHandle&) = delete;

  T* get() const noexcept { return h_; }
  T* operator->() const noexcept { return h_; }
  explicit operator bool() const noexcept { return h_ != nullptr; }
  uv_handle_t* handle() const noexcept { return reinterpret_cast<uv_handle_t*>(h_); }

  void reset() noexcept {
    if (h_ == nullptr) return;
    auto* base = reinterpret_cast<uv_handle_t*>(std::exchange(h_, nullptr));
    base->data = nullptr;
    if (base->loop == nullptr) {  // never initialised
      delete reinterpret_cast<T*>(base);
      return;
    }
    if (uv_is_closing(base) == 0)
      uv_close(base, [](uv_handle_t* p) { delete reinterpret_cast<T*>(p); });
    // A handle already closing is freed by whoever started the close (not us): never here.
  }

 private:
  T* h_ = nullptr;
};

class LoopPost {
 public:
  explicit LoopPost(uv_loop_t* loop);
  ~LoopPost();
  LoopPost(const LoopPost&) = delete;
  LoopPost& operator=(const LoopPost&) = delete;

  // Thread-safe. Closures run on the loop thread in the order posted.
  void post(std::function<void()> fn);
  // Lets the loop exit although this handle is open (shutdown).
  void unref() { uv_unref(async_.handle()); }

 private:
  void drain();
  UvHandle<uv_async_t> async_;
  std::mutex mu_;
  std::vector<std::function<void()>> queue_;
};

void run_in_pool(uv_loop_t* loop, std::function<void()> work, std::function<void()> after);

// The wall clock in unix milliseconds (entries' timestamps).
std::int64_t unix_now_ms();

}  // namespace kcache::daemon

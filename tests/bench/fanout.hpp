// fanout.hpp — N forked worker processes released at the same instant, with results in
// shared memory: how the benchmarks model N inference workers on one host.
//
// Contract: `SharedArray<T>` is created before `fan_out` and is visible, zero-filled, in
// every child and in the parent. `fan_out(n, child)` forks n children; each runs
// `child(i, go)`, does its set-up, calls `go()` (which blocks until all n are ready) and
// returns its exit status. fan_out returns the CLOCK_MONOTONIC instant (ns) at which the
// children were released, or -1 if a child failed (non-zero exit or signal). T must be
// trivially copyable; children must not use objects created by the parent's libkcache.
#pragma once

#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <type_traits>
#include <vector>

namespace kcache::bench {

inline std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

template <class T>
class SharedArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  explicit SharedArray(std::size_t n) : size_(n == 0 ? 1 : n) {
    void* p = ::mmap(nullptr, size_ * sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
    if (p == MAP_FAILED) std::abort();
    data_ = static_cast<T*>(p);
  }
  ~SharedArray() { ::munmap(data_, size_ * sizeof(T)); }
  SharedArray(const SharedArray&) = delete;
  SharedArray& operator=(const SharedArray&) = delete;

  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* data() noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  std::size_t size_;
  T* data_;
};

inline std::int64_t fan_out(int n, const std::function<int(int, const std::function<void()>&)>& child) {
  int ready[2], go[2];
  if (::pipe(ready) != 0 || ::pipe(go) != 0) return -1;
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) std::abort();
    pids.push_back(pid);
    if (pid == 0) {
      ::close(ready[0]);
      ::close(go[1]);
      const std::function<void()> wait_for_go = [&] {
        char b = 'r';
        if (::write(ready[1], &b, 1) != 1) ::_exit(3);
        if (::read(go[0], &b, 1) != 1) ::_exit(3);
      };
      ::_exit(child(i, wait_for_go));
    }
  }
  ::close(ready[1]);
  ::close(go[0]);
  bool ok = true;
  for (int got = 0; got < n;) {
    char buf[256];
    const ssize_t r = ::read(ready[0], buf, sizeof buf);
    if (r <= 0) {  // a child died before it was ready
      ok = false;
      break;
    }
    got += static_cast<int>(r);
  }
  const std::int64_t released = monotonic_ns();
  for (int i = 0; ok && i < n; ++i) {
    const char b = 'g';
    if (::write(go[1], &b, 1) != 1) ok = false;
  }
  ::close(go[1]);
  ::close(ready[0]);
  for (const pid_t pid : pids) {
    int status = 0;
    if (::waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ok = false;
  }
  return ok ? released : -1;
}

}  // namespace kcache::bench

// notify_reader.hpp — the test's end of NOTIFY_SOCKET, read continuously.
//
// `bind(path)` creates the datagram socket and starts a thread that queues every message.
// Reading continuously matters: the kernel queues only a few datagrams per unix socket
// (net.unix.max_dgram_qlen, 10 by default) and sd_notify() blocks once the queue is full, so a
// test that stops reading would wedge the daemon it tests. `next(timeout)` pops the oldest
// message; `wait_for(needle, timeout)` pops until one contains `needle` ("" when none came).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace kcache::test {

class NotifyReader {
 public:
  NotifyReader() = default;
  ~NotifyReader();
  NotifyReader(const NotifyReader&) = delete;
  NotifyReader& operator=(const NotifyReader&) = delete;

  bool bind(const std::string& path);
  std::optional<std::string> next(std::chrono::milliseconds timeout);
  std::string wait_for(std::string_view needle, std::chrono::milliseconds timeout);

 private:
  void read_loop();

  int fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
};

}  // namespace kcache::test

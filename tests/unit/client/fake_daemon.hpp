// tests/unit/client/fake_daemon.hpp — a scripted kcached for libkcache's tests.
//
// It listens on a Unix socket, answers the hello of every connection with a configurable
// HelloReply, records every later frame and hands it to a test-supplied handler that scripts
// the answer: replies (interim or final), passed fds, delays, silence or hang-ups. Each
// connection is served by its own thread, so handlers must be thread-safe.
// stop() closes the listener and every connection, like a daemon that exits; start() listens
// again on the same path, like a restarted one.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kcache/result.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

namespace kcache::test {

// One accepted connection, as seen by a handler.
class Session {
 public:
  explicit Session(int fd) : fd_(fd) {}
  // Sends a reply to `request` (same request id, opcode | 0x8000). With pass_fd >= 0 the
  // frame's first byte carries that fd (SCM_RIGHTS); the caller keeps its own copy.
  void reply(const wire::FrameHeader& request, std::string_view payload, std::uint16_t flags = 0,
             int pass_fd = -1);
  // Hangs up (the client sees EOF).
  void hang_up();

 private:
  int fd_;
};

using Handler =
    std::function<void(Session&, const wire::FrameHeader& header, std::string_view payload)>;

struct ReceivedFrame {
  wire::FrameHeader header;
  std::string payload;
};

class FakeDaemon {
 public:
  explicit FakeDaemon(std::string socket_path);
  ~FakeDaemon();
  FakeDaemon(const FakeDaemon&) = delete;
  FakeDaemon& operator=(const FakeDaemon&) = delete;

  // cuda compiler "nvrtc 13.0 (test)", device 0 = sm_90a, fd passing and key lookups.
  static wire::HelloReply default_hello();

  void set_hello(wire::HelloReply hello);
  // Answers the hello itself with an error reply instead (e.g. unsupported_version).
  void set_hello_error(Error error);
  void set_handler(Handler handler);

  void start();
  void stop();

  const std::string& path() const { return path_; }
  int connections() const { return connections_.load(); }
  std::vector<wire::HelloRequest> hellos() const;
  std::vector<ReceivedFrame> requests() const;  // every frame after the hello
  std::vector<wire::GetRequest> gets() const;   // the get requests among them, decoded

 private:
  void accept_loop();
  void serve(int fd);

  std::string path_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // eventfd: wakes every poll() on stop()
  std::thread acceptor_;
  std::atomic<int> connections_{0};

  mutable std::mutex mu_;
  wire::HelloReply hello_;
  std::unique_ptr<Error> hello_error_;
  Handler handler_;
  std::vector<wire::HelloRequest> hellos_;
  std::vector<ReceivedFrame> requests_;
  std::vector<int> session_fds_;
  std::vector<std::thread> sessions_;
};

// Payload helpers for handlers.
std::string module_payload(std::string path, std::string target = "sm_90a",
                           wire::Origin origin = wire::Origin::hit);
std::string error_payload(Errc code, std::string message, std::string log = {});
std::string json_payload(std::string json);

// A private temporary directory, removed with its contents at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

}  // namespace kcache::test

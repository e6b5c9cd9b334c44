// client/connection.hpp — one blocking connection to kcached: connect, hello, frames, fds.
//
// Contract:
//  * Connection::open() connects an AF_UNIX stream socket to the configured path (empty: the
//    discovery order of common/paths.hpp, re-evaluated on every attempt), retrying while the
//    daemon is (re)starting (ENOENT, ECONNREFUSED, EAGAIN) until the connect timeout, then does
//    the hello handshake within the request timeout. Outcomes: Errc::disconnected (cannot
//    reach the daemon; the message names the path, the errno and the timeout),
//    Errc::timeout (no hello reply), Errc::unsupported_version, Errc::protocol.
//  * send()/receive() honour a deadline through poll(). A deadline that passes is
//    Errc::timeout with an empty message: the caller knows which timeout it was. EOF, EPIPE and
//    ECONNRESET are Errc::disconnected; other errnos Errc::io; a bad frame Errc::protocol.
//  * Any failure of send()/receive() marks the connection broken(): a reply may still be in
//    flight, so it must never carry another request. mark_broken() does the same for callers
//    that found a protocol violation in a frame.
//  * receive() captures every fd passed with SCM_RIGHTS (close-on-exec); take_fd() hands the
//    first one over, discard_fds() closes them all.
//  * Not thread-safe: one thread uses a connection at a time (client/pool.hpp hands it over).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <string_view>

#include "common/fd.hpp"
#include "kcache/result.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"
#include "wire/protocol.hpp"

namespace kcache::client {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// The three separate timeouts of a client (docs/client.md "Timeouts").
struct Timeouts {
  std::chrono::milliseconds connect{2000};    // keep retrying to reach the daemon this long
  std::chrono::milliseconds request{10000};   // from sending until any reply
  std::chrono::milliseconds compile{300000};  // from an in_progress reply until the final one
};

class Connection {
 public:
  // `socket_path` empty: discover the socket (KCACHE_SOCKET, system, user) on every attempt.
  static Result<std::unique_ptr<Connection>> open(const std::string& socket_path,
                                                  const Timeouts& timeouts);

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Writes all of `bytes` (one or more whole frames) before `deadline`.
  Status send(std::string_view bytes, Deadline deadline);
  // The next whole frame; its payload stays valid until the next receive().
  Result<wire::Frame> receive(Deadline deadline);

  const wire::HelloReply& hello() const noexcept { return hello_; }
  const std::string& path() const noexcept { return path_; }
  std::uint32_t next_request_id() noexcept { return ++last_request_id_; }

  bool broken() const noexcept { return broken_; }
  void mark_broken() noexcept { broken_ = true; }

  // The first fd received since the last discard_fds(), or an invalid Fd.
  Fd take_fd() noexcept;
  void discard_fds() noexcept;

  // Scratch reused by every request on this connection so the hit path does not allocate.
  std::string& send_buffer() noexcept { return send_buffer_; }
  wire::GetRequest& get_scratch() noexcept { return get_scratch_; }

  // Which daemon identity (client/client.hpp) this connection's hello belongs to.
  std::uint64_t generation() const noexcept { return generation_; }
  void set_generation(std::uint64_t generation) noexcept { generation_ = generation; }

 private:
  static constexpr std::size_t kMaxFds = 4;  // more fds than this in one message are dropped
  static constexpr Clock::duration kReceiveSlack = std::chrono::milliseconds(1);

  Connection(Fd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  Status handshake(Deadline deadline);
  Status wait(short events, Deadline deadline);
  Status fill(Deadline deadline);
  Status arm_receive_timeout(Clock::duration left);
  Error fail(Error error);  // marks the connection broken
  void keep_fd(int fd) noexcept;

  Fd fd_;
  std::string path_;
  // Replies (JSON lists in particular) may exceed the daemon's request limit; this bounds
  // only what a misbehaving peer can make us buffer.
  wire::FrameReader reader_{256u << 20};
  wire::HelloReply hello_;
  std::array<Fd, kMaxFds> fds_;
  std::size_t fd_count_ = 0;
  std::string send_buffer_;
  wire::GetRequest get_scratch_;
  std::uint32_t last_request_id_ = 0;
  Clock::duration armed_{0};  // the socket's SO_RCVTIMEO; zero: not armed yet
  std::uint64_t generation_ = 0;
  bool broken_ = false;
};

// One request frame in `buf` (wire/frame.hpp's build_frame; requests carry no flags).
template <class EncodePayload>
std::string_view build_frame(std::string& buf, wire::Opcode opcode, std::uint32_t request_id,
                             EncodePayload&& encode_payload) {
  return wire::build_frame(buf, static_cast<std::uint16_t>(opcode), 0, request_id,
                           std::forward<EncodePayload>(encode_payload));
}

// Milliseconds of a duration, for messages.
inline long long ms(std::chrono::milliseconds d) noexcept {
  return d.count();
}

}  // namespace kcache::client

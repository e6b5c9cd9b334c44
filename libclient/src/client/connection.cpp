#include "client/connection.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>

#include <algorithm>
#include <cstring>

#include "common/paths.hpp"

namespace kcache::client {

namespace {

using std::chrono::milliseconds;

// A daemon that is starting, restarting or briefly overloaded answers like this; anything
// else (EACCES, ENOTSOCK…) will not change by waiting.
bool daemon_starting(int err) noexcept {
  return err == ENOENT || err == ECONNREFUSED || err == EAGAIN;
}

bool connection_lost(int err) noexcept {
  return err == EPIPE || err == ECONNRESET || err == ENOTCONN;
}

void sleep_for(std::chrono::nanoseconds d) noexcept {
  timespec ts{static_cast<time_t>(d.count() / 1'000'000'000),
              static_cast<long>(d.count() % 1'000'000'000)};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

Result<std::string> resolve_path(const std::string& configured) {
  if (!configured.empty()) return configured;
  return client_socket_path();
}

// One connect() attempt. Returns the connected socket, or the errno of the failure.
Result<Fd> try_connect(const std::string& path, int& err) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    return make_error(Errc::invalid_argument, "socket path '" + path + "' is longer than " +
                                                  std::to_string(sizeof addr.sun_path - 1) +
                                                  " bytes");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking, so a full listen backlog is EAGAIN (retried) instead of a hang.
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return errno_error(Errc::io, "socket");
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) {
    // Blocking from here on: replies are read by one recvmsg bounded by SO_RCVTIMEO (fill());
    // sends stay non-blocking per call (MSG_DONTWAIT).
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
      return errno_error(Errc::io, "fcntl on the kcached socket");
    return fd;
  }
  err = errno;
  return Fd{};
}

}  // namespace

Result<std::unique_ptr<Connection>> Connection::open(const std::string& socket_path,
                                                     const Timeouts& timeouts) {
  const Deadline give_up = Clock::now() + timeouts.connect;
  std::chrono::nanoseconds backoff = milliseconds(1);
  while (true) {
    KC_TRY_ASSIGN(std::string path, resolve_path(socket_path));
    int err = 0;
    KC_TRY_ASSIGN(Fd fd, try_connect(path, err));
    if (fd) {
      std::unique_ptr<Connection> conn(new Connection(std::move(fd), path));
      const Status hello = conn->handshake(Clock::now() + timeouts.request);
      if (hello.ok()) return conn;
      if (hello.error().code == Errc::timeout)
        return make_error(Errc::timeout, "no hello reply from kcached at '" + path +
                                             "' within the request timeout (" +
                                             std::to_string(ms(timeouts.request)) + " ms)");
      // A daemon shutting down accepts and then closes: ride it out like a refused connect.
      if (hello.error().code != Errc::disconnected || Clock::now() >= give_up) return hello.error();
      err = ECONNRESET;
    } else if (!daemon_starting(err)) {
      return errno_error(Errc::disconnected, "cannot connect to kcached at '" + path + "'", err);
    }
    const Deadline now = Clock::now();
    if (now >= give_up)
      return make_error(Errc::disconnected, "cannot reach kcached at '" + path +
                                                "': " + std::strerror(err) +
                                                " (gave up after the connect timeout of " +
                                                std::to_string(ms(timeouts.connect)) + " ms)");
    sleep_for(std::min<std::chrono::nanoseconds>(backoff, give_up - now));
    backoff = std::min<std::chrono::nanoseconds>(backoff * 2, milliseconds(50));
  }
}

Status Connection::handshake(Deadline deadline) {
  const std::uint32_t id = next_request_id();
  const std::string_view frame =
      build_frame(send_buffer_, wire::Opcode::hello, id, [](std::string& out) {
        wire::encode(out, wire::HelloRequest{wire::kMinProtocolVersion, wire::kProtocolVersion, 0});
      });
  KC_TRY(send(frame, deadline));
  KC_TRY_ASSIGN(const wire::Frame reply, receive(deadline));
  constexpr auto kHelloReply = static_cast<std::uint16_t>(wire::Opcode::hello) | wire::kReplyBit;
  if (reply.header.opcode != kHelloReply || reply.header.request_id != id)
    return fail(make_error(Errc::protocol, "kcached answered hello with opcode " +
                                               std::to_string(reply.header.opcode)));
  auto hello = wire::decode_hello_reply(reply.payload);
  if (!hello.ok()) {
    broken_ = true;
    return std::move(hello).error();
  }
  if (hello->proto < wire::kMinProtocolVersion || hello->proto > wire::kProtocolVersion)
    return fail(make_error(Errc::unsupported_version,
                           "kcached chose protocol version " + std::to_string(hello->proto) +
                               ", this libkcache speaks " +
                               std::to_string(wire::kMinProtocolVersion) + ".." +
                               std::to_string(wire::kProtocolVersion)));
  hello_ = std::move(hello).value();
  return {};
}

Error Connection::fail(Error error) {
  broken_ = true;
  return error;
}

Status Connection::wait(short events, Deadline deadline) {
  pollfd p{fd_.get(), events, 0};
  while (true) {
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return fail(make_error(Errc::timeout, ""));
    // Round up: a poll that wakes a little early would otherwise spin with a 0 ms timeout.
    const auto left_ms = std::chrono::ceil<milliseconds>(left).count();
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left_ms, 1 << 30)));
    if (rc > 0) return {};
    if (rc < 0 && errno != EINTR) return fail(errno_error(Errc::io, "poll"));
  }
}

Status Connection::send(std::string_view bytes, Deadline deadline) {
  while (!bytes.empty()) {
    // MSG_NOSIGNAL: a daemon that went away is EPIPE here, never a SIGPIPE in the worker.
    const ssize_t n = ::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) {
      KC_TRY(wait(POLLOUT, deadline));
      continue;
    }
    if (connection_lost(err))
      return fail(errno_error(Errc::disconnected, "kcached at '" + path_ + "' went away", err));
    return fail(errno_error(Errc::io, "send to kcached", err));
  }
  return {};
}

Result<wire::Frame> Connection::receive(Deadline deadline) {
  while (true) {
    auto next = reader_.next();
    if (!next.ok())
      return fail(make_error(Errc::protocol, "bad frame from kcached: " + next.error().message));
    if (next->has_value()) return **next;
    KC_TRY(fill(deadline));
  }
}

void Connection::keep_fd(int fd) noexcept {
  Fd owned(fd);
  // Beyond kMaxFds nobody asked for them: `owned` closes the rest.
  if (fd_count_ < kMaxFds) fds_[fd_count_++] = std::move(owned);
}

Status Connection::fill(Deadline deadline) {
  // One blocking recvmsg bounded by SO_RCVTIMEO, not poll + recvmsg: a hit costs its send and
  // this receive and nothing else (docs/benchmarks.md, "Where a hit's microseconds go").
  const auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return fail(make_error(Errc::timeout, ""));
  KC_TRY(arm_receive_timeout(left));
  auto prepared = reader_.prepare(64 * 1024);
  if (!prepared.ok()) return fail(std::move(prepared).error());
  const std::span<char> space = *prepared;
  iovec iov{space.data(), space.size()};
  // Always room for SCM_RIGHTS: without it the kernel would drop a passed fd silently.
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd_.get(), &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) {
    const int err = errno;
    // The armed period ran out or a signal came: the caller rechecks the deadline.
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) return {};
    if (connection_lost(err))
      return fail(errno_error(Errc::disconnected, "kcached at '" + path_ + "' went away", err));
    return fail(errno_error(Errc::io, "receive from kcached", err));
  }
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      keep_fd(fd);
    }
  }
  if (n == 0)
    return fail(make_error(Errc::disconnected, "kcached at '" + path_ + "' closed the connection"));
  reader_.commit(static_cast<std::size_t>(n));
  return {};
}

Status Connection::arm_receive_timeout(Clock::duration left) {
  // Re-armed (a setsockopt) only when the deadline is nearer than the armed period, or much
  // further: back-to-back requests with the same timeout arm it once per connection. A
  // receive may outlast its deadline by at most kReceiveSlack.
  if (armed_ > Clock::duration::zero() && armed_ <= left + kReceiveSlack && armed_ * 2 >= left) return {};
  const auto us = std::chrono::ceil<std::chrono::microseconds>(left).count();
  timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
  if (::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
    return fail(errno_error(Errc::io, "setsockopt SO_RCVTIMEO"));
  armed_ = left;
  return {};
}

Fd Connection::take_fd() noexcept {
  if (fd_count_ == 0) return Fd{};
  Fd first = std::move(fds_[0]);
  std::move(fds_.begin() + 1, fds_.begin() + static_cast<std::ptrdiff_t>(fd_count_), fds_.begin());
  --fd_count_;
  return first;
}

void Connection::discard_fds() noexcept {
  for (std::size_t i = 0; i < fd_count_; ++i) fds_[i].reset();
  fd_count_ = 0;
}

}  // namespace kcache::client

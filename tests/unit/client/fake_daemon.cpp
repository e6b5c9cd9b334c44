#include "fake_daemon.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace kcache::test {

namespace {

[[noreturn]] void die(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

void Session::reply(const wire::FrameHeader& request, std::string_view payload, std::uint16_t flags,
                    int pass_fd) {
  std::string frame;
  wire::append_frame(frame, static_cast<std::uint16_t>(request.opcode | wire::kReplyBit), flags,
                     request.request_id, payload);
  std::string_view rest = frame;
  if (pass_fd >= 0) {
    iovec iov{const_cast<char*>(rest.data()), rest.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass_fd, sizeof pass_fd);
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n <= 0) return;  // the client is gone; the test will notice on its side
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  while (!rest.empty()) {
    const ssize_t n = ::send(fd_, rest.data(), rest.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

void Session::hang_up() {
  ::shutdown(fd_, SHUT_RDWR);
}

FakeDaemon::FakeDaemon(std::string socket_path)
    : path_(std::move(socket_path)), hello_(default_hello()) {}

FakeDaemon::~FakeDaemon() {
  stop();
}

wire::HelloReply FakeDaemon::default_hello() {
  wire::HelloReply h;
  h.proto = 1;
  h.daemon_version = "0.1.0-fake";
  h.capabilities = wire::kCapFdPassing | wire::kCapKeyLookup;
  h.max_frame = wire::kDefaultMaxFrame;
  h.compilers.push_back({"cuda", "nvrtc 13.0 (test)"});
  h.device_targets.push_back("sm_90a");
  return h;
}

void FakeDaemon::set_hello(wire::HelloReply hello) {
  std::lock_guard lock(mu_);
  hello_ = std::move(hello);
  hello_error_.reset();
}

void FakeDaemon::set_hello_error(Error error) {
  std::lock_guard lock(mu_);
  hello_error_ = std::make_unique<Error>(std::move(error));
}

void FakeDaemon::set_handler(Handler handler) {
  std::lock_guard lock(mu_);
  handler_ = std::move(handler);
}

void FakeDaemon::start() {
  ::unlink(path_.c_str());
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) die("socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    die("bind " + path_);
  if (::listen(listen_fd_, 64) != 0) die("listen");
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd_ < 0) die("eventfd");
  acceptor_ = std::thread([this] { accept_loop(); });
}

void FakeDaemon::stop() {
  if (listen_fd_ < 0) return;
  const std::uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) != sizeof one) die("eventfd write");
  acceptor_.join();
  std::vector<std::thread> sessions;
  std::vector<int> fds;
  {
    std::lock_guard lock(mu_);
    sessions.swap(sessions_);
    fds.swap(session_fds_);
  }
  for (int fd : fds) ::shutdown(fd, SHUT_RDWR);
  for (std::thread& t : sessions) t.join();
  for (int fd : fds) ::close(fd);
  ::close(listen_fd_);
  ::close(stop_fd_);
  ::unlink(path_.c_str());
  listen_fd_ = stop_fd_ = -1;
}

void FakeDaemon::accept_loop() {
  while (true) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[1].revents != 0) return;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    connections_.fetch_add(1);
    std::lock_guard lock(mu_);
    session_fds_.push_back(fd);
    sessions_.emplace_back([this, fd] { serve(fd); });
  }
}

void FakeDaemon::serve(int fd) {
  wire::FrameReader reader;
  Session session(fd);
  bool greeted = false;
  while (true) {
    while (true) {
      auto next = reader.next();
      if (!next.ok() || !next->has_value()) break;
      const wire::Frame frame = **next;
      const std::string payload(frame.payload);
      if (!greeted) {
        greeted = true;
        std::string answer;
        {
          std::lock_guard lock(mu_);
          if (auto hello = wire::decode_hello_request(payload); hello.ok())
            hellos_.push_back(*hello);
          if (hello_error_)
            wire::encode_error(answer, *hello_error_);
          else
            wire::encode(answer, hello_);
        }
        session.reply(frame.header, answer);
        continue;
      }
      Handler handler;
      {
        std::lock_guard lock(mu_);
        requests_.push_back({frame.header, payload});
        handler = handler_;
      }
      if (handler)
        handler(session, frame.header, payload);
      else
        session.reply(frame.header, error_payload(Errc::not_found, "fake: no handler"));
    }
    pollfd p[2] = {{fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) return;
    if (p[1].revents != 0) return;
    if (p[0].revents == 0) continue;
    const auto prepared = reader.prepare(64 * 1024);
    if (!prepared.ok()) return;
    const std::span<char> space = *prepared;
    const ssize_t n = ::read(fd, space.data(), space.size());
    if (n <= 0) return;
    reader.commit(static_cast<std::size_t>(n));
  }
}

std::vector<wire::HelloRequest> FakeDaemon::hellos() const {
  std::lock_guard lock(mu_);
  return hellos_;
}

std::vector<ReceivedFrame> FakeDaemon::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

std::vector<wire::GetRequest> FakeDaemon::gets() const {
  std::vector<wire::GetRequest> out;
  for (const ReceivedFrame& r : requests()) {
    if (r.header.opcode != static_cast<std::uint16_t>(wire::Opcode::get)) continue;
    auto decoded = wire::decode_get_request(r.payload);
    if (decoded.ok()) out.push_back(std::move(decoded).value());
  }
  return out;
}

std::string module_payload(std::string path, std::string target, wire::Origin origin) {
  wire::ModuleReply m;
  m.path = std::move(path);
  m.size = 4096;
  m.digest = digest_of(m.path);
  m.origin = origin;
  m.target = std::move(target);
  m.key = digest_of("key of " + m.path);
  std::string out;
  wire::encode(out, m);
  return out;
}

std::string error_payload(Errc code, std::string message, std::string log) {
  std::string out;
  wire::encode_error(out, make_error(code, std::move(message), std::move(log)));
  return out;
}

std::string json_payload(std::string json) {
  std::string out;
  wire::encode(out, wire::ControlReply{std::move(json)});
  return out;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/kcache-client-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) die("mkdtemp");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace kcache::test

#include "server/server.hpp"

#include <spdlog/spdlog.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "common/units.hpp"
#include "loop/contain.hpp"
#include "app/daemon.hpp"
#include "server/session.hpp"

namespace kcache::daemon {

namespace {

Result<sockaddr_un> unix_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    return make_error(Errc::invalid_argument, "socket path " + path + " is longer than " +
                                                  std::to_string(sizeof addr.sun_path - 1) + " bytes");
  path.copy(addr.sun_path, path.size());
  return addr;
}

// True when something accepts connections at `path` (a live daemon).
bool someone_listens(const sockaddr_un& addr) {
  Fd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe) return false;
  return ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

}  // namespace

Server::~Server() { close(); }

Status Server::bind(const std::string& path, std::uint32_t mode, std::optional<gid_t> group) {
  KC_TRY_ASSIGN(const sockaddr_un addr, unix_address(path));
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return make_error(Errc::io, "cannot create " + parent.string() + ": " + ec.message());

  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return make_error(Errc::invalid_argument, path + " exists and is not a socket");
    if (someone_listens(addr))
      return make_error(Errc::busy, "socket " + path + " is in use by another kcached");
    ::unlink(path.c_str());  // stale: its daemon is gone
  }
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return errno_error(Errc::io, "socket");
  // The socket is created with the final mode: no window where it is wider open.
  const mode_t old_umask = ::umask(static_cast<mode_t>(~mode & 0777));
  const int rc = ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  ::umask(old_umask);
  if (rc != 0) return errno_error(Errc::io, "cannot bind " + path, err);
  if (group && ::lchown(path.c_str(), static_cast<uid_t>(-1), *group) != 0)
    return errno_error(Errc::io, "cannot give " + path + " to group " + std::to_string(*group));
  if (::listen(fd.get(), SOMAXCONN) != 0) return errno_error(Errc::io, "listen on " + path);
  listen_fd_ = std::move(fd);
  path_ = path;
  owns_path_ = true;
  return {};
}

Status Server::adopt(int fd) {
  // A unit with the wrong ListenStream= (a datagram or TCP socket) is a clear start-up error,
  // not a daemon that accepts nothing.
  if (sd_is_socket_unix(fd, SOCK_STREAM, /*listening=*/1, nullptr, 0) <= 0)
    return make_error(Errc::invalid_argument, "the socket passed by the service manager (fd " +
                                                  std::to_string(fd) +
                                                  ") is not a listening Unix stream socket");
  if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
    return errno_error(Errc::io, "fcntl on the passed socket");
  listen_fd_.reset(fd);
  sockaddr_un addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 && addr.sun_path[0] != '\0')
    path_ = addr.sun_path;
  owns_path_ = false;  // systemd owns it
  return {};
}

Status Server::start() {
  poll_ = UvHandle<uv_poll_t>::make();
  int rc = uv_poll_init_socket(loop_, poll_.get(), listen_fd_.get());
  if (rc != 0) return uv_error("uv_poll_init", rc);
  poll_->data = this;
  rc = uv_poll_start(poll_.get(), UV_READABLE, [](uv_poll_t* p, int status, int) {
    if (p->data != nullptr && status == 0) contain("Server::on_readable", [&] { static_cast<Server*>(p->data)->on_readable(); });
  });
  if (rc != 0) return uv_error("uv_poll_start", rc);
  sweep_timer_ = UvHandle<uv_timer_t>::make();
  uv_timer_init(loop_, sweep_timer_.get());
  sweep_timer_->data = this;
  uv_timer_start(
      sweep_timer_.get(),
      [](uv_timer_t* t) {
        if (t->data != nullptr) contain("Server::sweep", [&] { static_cast<Server*>(t->data)->sweep(); });
      },
      1000, 1000);
  uv_unref(sweep_timer_.handle());  // never what keeps the loop alive
  return budget_.start();
}

void Server::forget(std::uint64_t session_id) {
  const auto it = sessions_.find(session_id);
  if (it == sessions_.end()) return;
  const auto count = per_uid_.find(it->second->peer().uid);
  if (count != per_uid_.end() && --count->second == 0) per_uid_.erase(count);
  sessions_.erase(it);
}

void Server::sweep() {
  const DaemonConfig& c = daemon_.config();
  const std::uint64_t now = uv_now(loop_);
  const auto older = [now](std::uint64_t since, std::chrono::milliseconds limit) {
    return since != 0 && now - since > static_cast<std::uint64_t>(limit.count());
  };
  std::vector<std::pair<std::shared_ptr<Session>, std::string>> doomed;
  for (const auto& [id, s] : sessions_) {
    const Channel& ch = s->channel();
    if (!s->greeted() && older(s->opened_ms(), c.frame_timeout))
      doomed.emplace_back(s, "no hello within " + format_duration(c.frame_timeout) + " (slow or silent client)");
    else if (older(ch.partial_since_ms(), c.frame_timeout))
      doomed.emplace_back(s, "a frame left incomplete for " + format_duration(c.frame_timeout) + " (slow client)");
    else if (older(ch.queue_progress_ms(), c.stall_timeout))
      doomed.emplace_back(s, "replies unread for " + format_duration(c.stall_timeout) + " (" +
                                 format_size(ch.queued_bytes()) + " queued)");
    else if (s->pending() == 0 && ch.queued_bytes() == 0 && ch.partial_since_ms() == 0 &&
             older(std::max(ch.last_read_ms(), s->opened_ms()), c.idle_timeout))
      doomed.emplace_back(s, "idle for " + format_duration(c.idle_timeout));
  }
  // Closing erases from sessions_: close outside the loop over it.
  for (auto& [s, reason] : doomed) s->close(reason);
}

void Server::on_readable() {
  // Accept everything pending: one wakeup may carry a burst of connects.
  while (true) {
    Fd fd(::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        spdlog::warn("accept on {}: {}", path_, std::strerror(errno));
      return;
    }
    if (sessions_.size() >= daemon_.config().max_connections) {
      if (!refusing_)
        spdlog::warn("refusing connections: {} clients connected (limit {})", sessions_.size(),
                     daemon_.config().max_connections);
      refusing_ = true;
      continue;  // fd closes here
    }
    refusing_ = false;
    ucred peer{};
    socklen_t len = sizeof peer;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
      spdlog::warn("SO_PEERCRED: {}", std::strerror(errno));
      continue;
    }
    if (std::size_t& n = per_uid_[peer.uid]; n >= daemon_.config().max_connections_per_uid) {
      if (!refusing_uid_logged_)
        spdlog::warn("refusing connections from uid {}: it holds {} (limit {} per uid)", peer.uid,
                     n, daemon_.config().max_connections_per_uid);
      refusing_uid_logged_ = true;
      continue;  // fd closes here
    }
    refusing_uid_logged_ = false;
    const std::uint64_t id = next_id_++;
    auto session = std::make_shared<Session>(daemon_, id, std::move(fd), peer);
    if (auto started = session->start(); !started.ok()) {
      spdlog::warn("session {}: {}", id, started.error().message);
      continue;
    }
    ++per_uid_[peer.uid];
    sessions_.emplace(id, std::move(session));
  }
}

void Server::close() {
  if (poll_) {
    uv_poll_stop(poll_.get());
    poll_.reset();
  }
  listen_fd_.reset();
  // Closing a session erases it from the map: close a snapshot.
  auto sessions = std::move(sessions_);
  sessions_.clear();
  for (auto& [id, s] : sessions) s->close("daemon stopping");
  budget_.stop();
  if (owns_path_) {
    ::unlink(path_.c_str());
    owns_path_ = false;
  }
}

}  // namespace kcache::daemon

#include "notify_reader.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace kcache::test {

NotifyReader::~NotifyReader() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

bool NotifyReader::bind(const std::string& path) {
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return false;
  thread_ = std::thread([this] { read_loop(); });
  return true;
}

void NotifyReader::read_loop() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) continue;
    {
      std::lock_guard lock(mu_);
      queue_.emplace_back(buf, static_cast<std::size_t>(n));
    }
    cv_.notify_all();
  }
}

std::optional<std::string> NotifyReader::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return !queue_.empty(); })) return std::nullopt;
  std::string m = std::move(queue_.front());
  queue_.pop_front();
  return m;
}

std::string NotifyReader::wait_for(std::string_view needle, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return {};
    auto m = next(left);
    if (!m) return {};
    if (m->find(needle) != std::string::npos) return *m;
  }
}

}  // namespace kcache::test

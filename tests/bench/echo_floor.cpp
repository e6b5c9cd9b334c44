#include "echo_floor.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "fanout.hpp"
#include "percentiles.hpp"

namespace kcache::bench {

namespace {

// Reads whole requests from every ready peer and answers each with one reply, until every
// peer has closed.
[[noreturn]] void serve(const std::vector<int>& fds, std::size_t request_size, std::size_t reply_size) {
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) ::_exit(1);
  std::vector<std::size_t> have(fds.size(), 0);
  for (std::size_t i = 0; i < fds.size(); ++i) {
    ::fcntl(fds[i], F_SETFL, O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    if (::epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) != 0) ::_exit(1);
  }
  std::vector<char> buf(64 * 1024), reply(reply_size, 'r');
  std::size_t open = fds.size();
  std::vector<epoll_event> events(64);
  while (open > 0) {
    const int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), -1);
    if (n < 0) continue;
    for (int e = 0; e < n; ++e) {
      const std::size_t i = events[e].data.u64;
      const ssize_t got = ::read(fds[i], buf.data(), buf.size());
      if (got <= 0) {
        if (got < 0 && errno == EAGAIN) continue;
        ::epoll_ctl(ep, EPOLL_CTL_DEL, fds[i], nullptr);
        ::close(fds[i]);
        --open;
        continue;
      }
      have[i] += static_cast<std::size_t>(got);
      for (; have[i] >= request_size; have[i] -= request_size)
        if (::write(fds[i], reply.data(), reply_size) != static_cast<ssize_t>(reply_size)) ::_exit(1);
    }
  }
  ::_exit(0);
}

bool read_exact(int fd, char* p, std::size_t size) {
  for (std::size_t got = 0; got < size;) {
    const ssize_t n = ::read(fd, p + got, size - got);
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

nlohmann::json echo_floor(int clients, int count, std::size_t request_size, std::size_t reply_size) {
  std::vector<int> server_ends, client_ends;
  for (int i = 0; i < clients; ++i) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
    client_ends.push_back(sv[0]);
    server_ends.push_back(sv[1]);
  }
  const pid_t server = ::fork();
  if (server < 0) std::abort();
  if (server == 0) {
    for (int fd : client_ends) ::close(fd);
    serve(server_ends, request_size, reply_size);
  }
  for (int fd : server_ends) ::close(fd);

  const auto n = static_cast<std::size_t>(clients), per = static_cast<std::size_t>(count);
  SharedArray<float> us(n * per);
  SharedArray<std::int64_t> end_ns(n);
  const std::int64_t released = fan_out(clients, [&](int i, const std::function<void()>& go) {
    const int fd = client_ends[static_cast<std::size_t>(i)];
    for (int j = 0; j < clients; ++j)
      if (j != i) ::close(client_ends[static_cast<std::size_t>(j)]);
    std::vector<char> request(request_size, 'q'), reply(reply_size);
    go();
    for (std::size_t k = 0; k < per; ++k) {
      const std::int64_t t0 = monotonic_ns();
      if (::write(fd, request.data(), request_size) != static_cast<ssize_t>(request_size)) return 1;
      if (!read_exact(fd, reply.data(), reply_size)) return 1;
      us[static_cast<std::size_t>(i) * per + k] = static_cast<float>(monotonic_ns() - t0) / 1e3f;
    }
    end_ns[static_cast<std::size_t>(i)] = monotonic_ns();
    return 0;
  });
  for (int fd : client_ends) ::close(fd);
  int status = 0;
  ::waitpid(server, &status, 0);
  if (released < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) std::abort();
  std::int64_t end = released;
  for (std::size_t i = 0; i < n; ++i) end = std::max(end, end_ns[i]);
  return summarize(std::vector<float>(us.data(), us.data() + n * per),
                   static_cast<double>(end - released) / 1e9);
}

}  // namespace kcache::bench

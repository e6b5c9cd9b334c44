#include "compiler/compilers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "common/fd.hpp"

extern char** environ;

namespace kcache::daemon {

namespace {

struct Probe {
  std::string backend;
  pid_t pid = -1;
  Fd out;
  std::string output;
  std::string spawn_error;
};

void spawn_probe(const std::string& executable, Probe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    p.spawn_error = std::string("pipe: ") + std::strerror(errno);
    return;
  }
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> args{executable, "--probe-compiler", p.backend, "--log-level", "off"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = posix_spawn(&p.pid, executable.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    p.pid = -1;
    p.spawn_error = "cannot run " + executable + ": " + std::strerror(rc);
    return;
  }
  p.out = std::move(read_end);
}

// Reads every probe's output until EOF or the deadline.
void collect(std::vector<Probe>& probes, std::chrono::steady_clock::time_point deadline) {
  while (true) {
    std::vector<pollfd> fds;
    std::vector<Probe*> owners;
    for (auto& p : probes)
      if (p.out) {
        fds.push_back({p.out.get(), POLLIN, 0});
        owners.push_back(&p);
      }
    if (fds.empty()) return;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) return;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      char buf[1024];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) owners[i]->output.append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) owners[i]->out.reset();
    }
  }
}

CompilerStatus finish(Probe& p, std::chrono::milliseconds timeout) {
  CompilerStatus s;
  s.backend = p.backend;
  if (p.pid < 0) {
    s.error = p.spawn_error;
    return s;
  }
  const bool timed_out = static_cast<bool>(p.out);
  if (timed_out) ::kill(p.pid, SIGKILL);
  int status = 0;
  ::waitpid(p.pid, &status, 0);
  while (!p.output.empty() && p.output.back() == '\n') p.output.pop_back();
  if (timed_out) {
    s.error = "compiler probe for " + p.backend + " timed out after " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) + " s";
  } else if (WIFSIGNALED(status)) {
    s.error = "compiler probe for " + p.backend + " crashed (signal " +
              std::to_string(WTERMSIG(status)) + ")";
  } else if (p.output.starts_with("ok ")) {
    s.available = true;
    s.identity = p.output.substr(3);
  } else if (p.output.starts_with("unavailable ")) {
    s.error = p.output.substr(12);
  } else {
    s.error = "compiler probe for " + p.backend + " failed: '" + p.output + "'";
  }
  return s;
}

}  // namespace

CompilerRegistry CompilerRegistry::probe(const std::string& executable,
                                         std::chrono::milliseconds timeout) {
  std::vector<Probe> probes(2);
  probes[0].backend = "cuda";
  probes[1].backend = "hip";
  for (auto& p : probes) spawn_probe(executable, p);
  collect(probes, std::chrono::steady_clock::now() + timeout);
  CompilerRegistry r;
  for (auto& p : probes) r.compilers_.push_back(finish(p, timeout));
  return r;
}

Result<std::string> CompilerRegistry::identity(std::string_view backend) const {
  for (const auto& c : compilers_) {
    if (c.backend != backend) continue;
    if (c.available) return c.identity;
    return make_error(Errc::unavailable, c.error);
  }
  return make_error(Errc::invalid_argument, "unknown backend '" + std::string(backend) + "'");
}

}  // namespace kcache::daemon

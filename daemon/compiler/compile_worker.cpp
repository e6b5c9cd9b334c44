#include "compiler/compile_worker.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/fd.hpp"
#include "compile/compiler.hpp"
#include "wire/frame.hpp"
#include "wire/messages.hpp"

namespace kcache::daemon {

namespace {

class CompilerCache {
 public:
  Result<Compiler*> get(const std::string& backend) {
    auto it = compilers_.find(backend);
    if (it == compilers_.end()) {
      auto loaded = load_compiler(backend);
      if (!loaded.ok()) return loaded.error();  // retried next time: the library may appear
      it = compilers_.emplace(backend, std::move(loaded).value()).first;
    }
    return it->second.get();
  }

 private:
  std::map<std::string, std::unique_ptr<Compiler>> compilers_;
};

Result<wire::CompileResult> compile(CompilerCache& compilers, std::string_view payload) {
  KC_TRY_ASSIGN(const wire::CompileJob job, wire::decode_compile_job(payload));
  KC_TRY_ASSIGN(Compiler* compiler, compilers.get(job.backend));
  // The daemon keyed this job with the identity it saw; a library swapped underneath since
  // then would file a binary under the wrong key.
  if (!job.identity.empty() && job.identity != compiler->identity())
    return make_error(Errc::unavailable, "compiler identity changed: daemon expected '" +
                                             job.identity + "', worker loaded '" +
                                             compiler->identity() + "'; restart kcached");
  return compiler->compile(job);
}

// Threads of this process (/proc/self/status), or -1 when it cannot be read.
int thread_count() {
  std::FILE* f = std::fopen("/proc/self/status", "re");
  if (f == nullptr) return -1;
  char line[256];
  int threads = -1;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::sscanf(line, "Threads: %d", &threads) == 1) break;
  std::fclose(f);
  return threads;
}

Status reply(int fd, std::uint32_t request_id, const Result<wire::CompileResult>& result) {
  std::string frame;
  wire::build_frame(frame, static_cast<std::uint16_t>(wire::Opcode::compile) | wire::kReplyBit, 0,
                    request_id, [&](std::string& out) {
                      if (result.ok()) wire::encode(out, result.value());
                      else wire::encode_error(out, result.error());
                    });
  return write_all(fd, frame.data(), frame.size());
}

// Everything before the first job: limits, the compilers loaded with the daemon's rights,
// then the confinement. False: this worker must not compile (the reason is logged).
bool prepare_worker(CompilerCache& compilers, std::uint64_t memory_limit,
                    const ConfinementPlan& plan) {
  if (memory_limit != 0) {
    // Address space, not RSS: a runaway compile fails its allocations (the compiler reports
    // or aborts; the daemon names the limit) instead of pushing the host into the OOM killer.
    const rlimit limit{memory_limit, memory_limit};
    if (::setrlimit(RLIMIT_AS, &limit) != 0)
      spdlog::warn("compile worker: cannot set the memory limit: {}", std::strerror(errno));
  }
  // Loaded with the daemon's rights: afterwards the worker may not be able to read them.
  for (const auto& backend : plan.preload)
    if (auto loaded = compilers.get(backend); !loaded.ok())
      spdlog::debug("compile worker: {} not preloaded: {}", backend, loaded.error().message);
  // Landlock binds the calling thread only: a library that started threads before it would
  // leave them unconfined, so such a worker does not compile.
  if (const int threads = thread_count(); threads != 1) {
    spdlog::error("compile worker: {} threads before confinement (a compiler library started "
                  "some); it compiles nothing", threads);
    return false;
  }
  // What a compromised compiler could do is bounded from its first byte. The daemon warned
  // once about mechanisms this kernel lacks; the notes repeat it at debug.
  auto confined = confine_worker(plan);
  if (!confined.ok()) {
    spdlog::error("compile worker: cannot confine itself, so it compiles nothing: {}",
                  confined.error().message);
    return false;
  }
  for (const auto& note : *confined) spdlog::debug("compile worker: {}", note);
  return true;
}

}  // namespace

int run_compile_worker(int fd, std::uint64_t memory_limit, const ConfinementPlan& plan) {
  // Die with the daemon, even on kill -9: an orphaned compile is wasted work.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 1;
  CompilerCache compilers;
  if (!prepare_worker(compilers, memory_limit, plan)) return 1;
  wire::FrameReader reader(kMaxWorkerFrame);
  // Leaves without unloading the compilers: NVRTC carries its own C++ runtime whose teardown
  // after dlclose is neither needed nor clean. The kernel reclaims everything.
  const auto leave = [](int code) {
    std::fflush(nullptr);
    ::_exit(code);
  };
  while (true) {
    auto prepared = reader.prepare(256 * 1024);
    if (!prepared.ok()) {
      spdlog::error("compile worker: {}", prepared.error().message);
      leave(1);
    }
    const std::span<char> space = *prepared;
    const ssize_t n = ::recv(fd, space.data(), space.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("compile worker: read: {}", std::strerror(errno));
      leave(1);
    }
    if (n == 0) leave(0);  // the daemon closed the socket: done
    reader.commit(static_cast<std::size_t>(n));
    while (true) {
      auto next = reader.next();
      if (!next.ok()) {
        spdlog::error("compile worker: {}", next.error().message);
        leave(1);
      }
      if (!next->has_value()) break;
      const wire::Frame frame = **next;
      if (frame.header.opcode != static_cast<std::uint16_t>(wire::Opcode::compile)) {
        spdlog::error("compile worker: unexpected opcode {}", frame.header.opcode);
        leave(1);
      }
      auto result = compile(compilers, frame.payload);
      if (auto sent = reply(fd, frame.header.request_id, result); !sent.ok()) {
        spdlog::error("compile worker: {}", sent.error().message);
        leave(1);
      }
    }
  }
}

int run_compiler_probe(const std::string& backend) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto loaded = load_compiler(backend);
  std::string line = loaded.ok() ? "ok " + (*loaded)->identity() : "unavailable " + loaded.error().message;
  for (char& c : line)
    if (c == '\n') c = ' ';
  line += '\n';
  const bool written = write_all(STDOUT_FILENO, line.data(), line.size()).ok();
  ::_exit(written ? 0 : 1);  // see run_compile_worker: no unloading
}

}  // namespace kcache::daemon

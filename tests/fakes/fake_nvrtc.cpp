// fake_nvrtc.cpp — a test-only compiler double with NVRTC's C ABI, injected into kcached
// (or an in-process client fallback) through KCACHE_NVRTC_LIBRARY; never installed, never a
// library kcached looks for by itself.
//
// Contract:
//  * $KCACHE_FAKE_NVRTC_REAL names the real NVRTC. Set: sources without a marker are compiled
//    by it, so a daemon under this double serves real cubins. Unset, empty or "none": the
//    double stands alone and synthesizes, for --gpu-architecture=sm_XY[a|f], a cubin that
//    kcached's publishing gate accepts (tests/support/synth_module.hpp) — the fresh-machine
//    backend of tests/support/test_backend.hpp. It never searches for a real NVRTC itself,
//    so hiding NVRTC from a test run hides it from the double too.
//  * Standing alone, a source containing `#error` fails as NVRTC does (NVRTC_ERROR_COMPILATION
//    with a log naming the program and the directive); every other source compiles. A comment
//    `KCACHE_FAKE_BYTES=<n>` pads the synthesized code to n bytes (at most 64 MiB), as a large
//    __device__ array does with a real compiler (disk-full tests).
//  * Markers, with or without a real NVRTC: a source containing
//      KCACHE_FAKE_HANG          never returns from nvrtcCompileProgram (timeout tests);
//      KCACHE_FAKE_CRASH         dies of SIGSEGV in nvrtcCompileProgram (crash tests);
//      KCACHE_FAKE_HOG           allocates until an allocation fails, then aborts, as a C++
//                                compiler's bad_alloc does (memory-limit tests);
//      KCACHE_FAKE_WRONG_TARGET  is compiled for sm_80 whatever was asked (the daemon must
//                                refuse the binary);
//      KCACHE_FAKE_SLOW          sleeps 300 ms, then compiles normally (concurrency tests);
//      KCACHE_FAKE_SLEEP_MS=<n>  sleeps n ms (at most 60 s), then compiles normally (fairness);
//      KCACHE_FAKE_TRY=ACTION:ARG  (one per line, any number) attempts what a compromised
//                                compiler would, then fails the compile (NVRTC_ERROR_COMPILATION)
//                                with one log line per attempt: "try ACTION:ARG: denied (why)"
//                                or "try ACTION:ARG: allowed". ACTION is read (open a file for
//                                reading), write (create or append to a file), list (open a
//                                directory), tcp (connect to IPv4 HOST:PORT), unix (connect to a
//                                socket path), exec (execve a program), signal (kill(PID, 0))
//                                (confinement tests).
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>
#include <new>
#include <string>
#include <vector>

#include "compile/rtc_abi.hpp"
#include "synth_module.hpp"

namespace {

using nvrtcResult = kcache::rtc_abi::Result;
using nvrtcProgram = kcache::rtc_abi::Program;
using Api = kcache::rtc_abi::Api;
using kcache::rtc_abi::kCompilation;
using kcache::rtc_abi::kInvalidInput;
using kcache::rtc_abi::kInvalidOption;
using kcache::rtc_abi::kInvalidProgram;
using kcache::rtc_abi::kOutOfMemory;
using kcache::rtc_abi::kSuccess;

template <class F>
bool bind(void* lib, const char* name, F* slot) {
  *slot = reinterpret_cast<F>(dlsym(lib, name));
  return *slot != nullptr;
}

// The real NVRTC named by $KCACHE_FAKE_NVRTC_REAL, or nullptr when the double stands alone.
const Api* real() {
  static const Api* api = [] () -> const Api* {
    const char* path = std::getenv("KCACHE_FAKE_NVRTC_REAL");
    if (path == nullptr || *path == '\0' || std::strcmp(path, "none") == 0) return nullptr;
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    static Api a{};
    if (lib == nullptr || !kcache::rtc_abi::bind_api(a, kcache::rtc_abi::kNvrtc, [lib](auto& slot, const char* name) {
          return bind(lib, name, &slot);
        }))
      abort();  // a test that names a real NVRTC that does not load is broken
    return &a;
  }();
  return api;
}

}  // namespace

// The double's own program handle: what the nvrtcProgram it hands out points to.
struct kcache::rtc_abi::ProgramHandle {
  nvrtcProgram real_program = nullptr;  // null when standing alone
  std::string source;
  std::string name;
  std::vector<std::byte> cubin;  // standing alone: the synthesized module
  std::string log;               // standing alone: the log
};

namespace {

using Program = kcache::rtc_abi::ProgramHandle;

[[noreturn]] void hog_until_refused() {
  for (;;) {
    auto* block = static_cast<char*>(std::malloc(64u << 20));
    if (block == nullptr) abort();  // what an uncaught std::bad_alloc ends in
    std::memset(block, 1, 64u << 20);
  }
}

std::string arch_of(int n, const char* const* options) {
  std::string arch;
  for (int i = 0; i < n; ++i)
    if (std::strncmp(options[i], "--gpu-architecture=", 19) == 0) arch = options[i] + 19;
  return arch;
}

// The double's own compile: `#error` fails, everything else becomes a cubin for `arch`.
nvrtcResult compile_alone(Program* p, const std::string& arch) {
  if (const auto at = p->source.find("#error"); at != std::string::npos) {
    const auto line = 1 + std::count(p->source.begin(), p->source.begin() + at, '\n');
    const auto eol = p->source.find('\n', at);
    p->log = p->name + "(" + std::to_string(line) + "): catastrophic error: #error directive: " +
             p->source.substr(at + 7, eol == std::string::npos ? eol : eol - at - 7) +
             "\n\n1 catastrophic error detected in the compilation of \"" + p->name + "\".\n" +
             "Compilation terminated.\n";
    return kCompilation;
  }
  std::string payload = "fake-nvrtc " + arch + "\n" + p->source;
  if (const auto at = p->source.find("KCACHE_FAKE_BYTES="); at != std::string::npos) {
    const unsigned long long want = std::strtoull(p->source.c_str() + at + 18, nullptr, 10);
    payload.resize(std::max<std::size_t>(payload.size(), std::min(want, 64ull << 20)), '\0');
  }
  p->cubin = kcache::testing::synth_cubin(arch, payload);
  if (p->cubin.empty()) {
    p->log = "nvrtc: error: invalid value for --gpu-architecture (-arch)\n";
    return kInvalidOption;
  }
  return kSuccess;
}

// One attempt of KCACHE_FAKE_TRY: 0 when the system let it happen, else the errno.
int attempt(const std::string& action, const std::string& arg) {
  const auto result = [](bool ok) { return ok ? 0 : errno; };
  if (action == "read" || action == "write") {
    const int fd = action == "read" ? ::open(arg.c_str(), O_RDONLY | O_CLOEXEC)
                                    : ::open(arg.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const int err = result(fd >= 0);
    if (fd >= 0) {
      if (action == "write" && ::write(fd, "planted\n", 8) != 8) return errno;
      ::close(fd);
    }
    return err;
  }
  if (action == "list") {
    DIR* d = ::opendir(arg.c_str());
    const int err = result(d != nullptr);
    if (d != nullptr) ::closedir(d);
    return err;
  }
  if (action == "tcp" || action == "unix") {
    const int fd = ::socket(action == "tcp" ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    int rc = -1;
    if (action == "tcp") {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      const auto colon = arg.rfind(':');
      a.sin_port = htons(static_cast<std::uint16_t>(std::atoi(arg.c_str() + colon + 1)));
      ::inet_pton(AF_INET, arg.substr(0, colon).c_str(), &a.sin_addr);
      rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::strncpy(a.sun_path, arg.c_str(), sizeof a.sun_path - 1);
      rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    const int err = result(rc == 0);
    ::close(fd);
    return err;
  }
  if (action == "exec") {
    const pid_t child = ::fork();
    if (child == 0) {
      char* const argv[] = {const_cast<char*>(arg.c_str()), nullptr};
      ::execv(arg.c_str(), argv);
      ::_exit(100 + errno);
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child) return errno;
    if (WIFEXITED(status) && WEXITSTATUS(status) > 100) return WEXITSTATUS(status) - 100;
    return 0;  // it ran
  }
  if (action == "signal") return result(::kill(std::atoi(arg.c_str()), 0) == 0);
  return EINVAL;
}

// KCACHE_FAKE_TRY=… lines: each attempted, each reported; true when there were any.
bool run_attempts(Program* p) {
  static constexpr std::string_view kMarker = "KCACHE_FAKE_TRY=";
  bool any = false;
  for (auto at = p->source.find(kMarker); at != std::string::npos; at = p->source.find(kMarker, at + 1)) {
    const auto start = at + kMarker.size();
    const auto eol = std::min(p->source.find('\n', start), p->source.size());
    const std::string what = p->source.substr(start, eol - start);
    const auto colon = what.find(':');
    const int err = attempt(what.substr(0, colon), colon == std::string::npos ? "" : what.substr(colon + 1));
    p->log += "try " + what + (err == 0 ? ": allowed\n" : ": denied (" + std::string(std::strerror(err)) + ")\n");
    any = true;
  }
  return any;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) const char* nvrtcGetErrorString(nvrtcResult r) {
  if (const Api* a = real()) return a->GetErrorString(r);
  switch (r) {
    case kSuccess: return "NVRTC_SUCCESS";
    case kOutOfMemory: return "NVRTC_ERROR_OUT_OF_MEMORY";
    case kInvalidInput: return "NVRTC_ERROR_INVALID_INPUT";
    case kInvalidOption: return "NVRTC_ERROR_INVALID_OPTION";
    case kCompilation: return "NVRTC_ERROR_COMPILATION";
    default: return "NVRTC_ERROR_INTERNAL_ERROR";
  }
}

__attribute__((visibility("default"))) nvrtcResult nvrtcVersion(int* major, int* minor) {
  if (const Api* a = real()) return a->Version(major, minor);
  *major = 13;  // the toolkit the synthesized cubins imitate
  *minor = 0;
  return kSuccess;
}

__attribute__((visibility("default"))) nvrtcResult nvrtcCreateProgram(
    nvrtcProgram* out, const char* src, const char* name, int n, const char* const* headers,
    const char* const* names) {
  auto* p = new (std::nothrow) Program;
  if (p == nullptr) return kOutOfMemory;
  p->source = src != nullptr ? src : "";
  p->name = name != nullptr ? name : "default_program";
  if (const Api* a = real()) {
    const nvrtcResult rc = a->CreateProgram(&p->real_program, src, name, n, headers, names);
    if (rc != kSuccess) {
      delete p;
      return rc;
    }
  }
  *out = p;
  return kSuccess;
}

__attribute__((visibility("default"))) nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  auto* p = *prog;
  if (p == nullptr) return kInvalidProgram;
  if (p->real_program != nullptr) real()->DestroyProgram(&p->real_program);
  delete p;
  *prog = nullptr;
  return kSuccess;
}

__attribute__((visibility("default"))) nvrtcResult nvrtcCompileProgram(
    nvrtcProgram prog, int n, const char* const* options) {
  auto* p = prog;
  const std::string& s = p->source;
  if (s.find("KCACHE_FAKE_HANG") != std::string::npos)
    for (;;) pause();
  if (s.find("KCACHE_FAKE_CRASH") != std::string::npos) raise(SIGSEGV);
  if (s.find("KCACHE_FAKE_HOG") != std::string::npos) hog_until_refused();
  if (s.find("KCACHE_FAKE_SLOW") != std::string::npos) {
    const timespec t{0, 300 * 1000 * 1000};
    nanosleep(&t, nullptr);
  }
  if (const auto at = s.find("KCACHE_FAKE_SLEEP_MS="); at != std::string::npos) {
    const long long ms = std::min(std::atoll(s.c_str() + at + 21), 60'000LL);
    const timespec t{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1'000'000};
    nanosleep(&t, nullptr);
  }
  if (run_attempts(p)) return kCompilation;
  const bool wrong_target = s.find("KCACHE_FAKE_WRONG_TARGET") != std::string::npos;
  std::vector<const char*> opts(options, options + n);
  if (wrong_target)
    for (const char*& o : opts)
      if (std::strncmp(o, "--gpu-architecture=", 19) == 0) o = "--gpu-architecture=sm_80";
  if (p->real_program == nullptr)
    return compile_alone(p, arch_of(static_cast<int>(opts.size()), opts.data()));
  return real()->CompileProgram(p->real_program, static_cast<int>(opts.size()), opts.data());
}

__attribute__((visibility("default"))) nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog,
                                                                      size_t* size) {
  const auto* p = prog;
  if (p->real_program != nullptr) return real()->GetCodeSize(p->real_program, size);
  if (p->cubin.empty()) return kInvalidInput;
  *size = p->cubin.size();
  return kSuccess;
}

__attribute__((visibility("default"))) nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* out) {
  const auto* p = prog;
  if (p->real_program != nullptr) return real()->GetCode(p->real_program, out);
  if (p->cubin.empty()) return kInvalidInput;
  std::memcpy(out, p->cubin.data(), p->cubin.size());
  return kSuccess;
}

__attribute__((visibility("default"))) nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog,
                                                                           size_t* size) {
  const auto* p = prog;
  // The double's own log (standing alone, or KCACHE_FAKE_TRY's report) comes first.
  if (p->real_program != nullptr && p->log.empty()) return real()->GetProgramLogSize(p->real_program, size);
  *size = p->log.size() + 1;
  return kSuccess;
}

__attribute__((visibility("default"))) nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog,
                                                                       char* out) {
  const auto* p = prog;
  if (p->real_program != nullptr && p->log.empty()) return real()->GetProgramLog(p->real_program, out);
  std::memcpy(out, p->log.c_str(), p->log.size() + 1);
  return kSuccess;
}

}  // extern "C"

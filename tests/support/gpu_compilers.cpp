// gpu_compilers.cpp — dlopen'ed NVRTC (in process) and hiprtc (in a forked child) for tests.
#include "gpu_compilers.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

#include "compile/compiler.hpp"
#include "synth_module.hpp"

namespace kcache::testing {
namespace {

constexpr const char* kKernel =
    "extern \"C\" __global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n";

// Both libraries share this C shape (nvrtc*/hiprtc* with an opaque program pointer).
using CreateFn = int (*)(void**, const char*, const char*, int, const char* const*,
                         const char* const*);
using CompileFn = int (*)(void*, int, const char* const*);
using SizeFn = int (*)(void*, std::size_t*);
using GetFn = int (*)(void*, char*);
using DestroyFn = int (*)(void**);

struct Api {
  CreateFn create = nullptr;
  CompileFn compile = nullptr;
  SizeFn code_size = nullptr;
  GetFn code = nullptr;
  SizeFn ptx_size = nullptr;  // NVRTC only
  GetFn ptx = nullptr;
  SizeFn log_size = nullptr;
  GetFn log = nullptr;
  DestroyFn destroy = nullptr;
};

// The production loader's candidates (compile/compiler.hpp), so $KCACHE_NVRTC_LIBRARY and
// $KCACHE_HIPRTC_LIBRARY hide a compiler from the tests exactly as from kcached.
void* open_first(std::string_view backend, std::string* tried, std::string* loaded) {
  for (const std::string& name : compiler_library_candidates(backend)) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      *loaded = name;
      return h;
    }
    *tried += std::string(tried->empty() ? "" : "; ") + dlerror();
  }
  return nullptr;
}

template <class F>
bool resolve(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

std::vector<std::byte> fetch(void* prog, SizeFn size, GetFn get) {
  std::size_t n = 0;
  if (size == nullptr || size(prog, &n) != 0 || n == 0) return {};
  std::vector<std::byte> out(n);
  if (get(prog, reinterpret_cast<char*>(out.data())) != 0) return {};
  return out;
}

// One compile through `api`; the caller owns library lifetime.
CompileOutcome run_compile(const Api& api, const std::string& option) {
  CompileOutcome out;
  void* prog = nullptr;
  if (api.create(&prog, kKernel, "scale.cu", 0, nullptr, nullptr) != 0) {
    out.status = CompileOutcome::Status::failed;
    out.message = "create program failed";
    return out;
  }
  const char* opts[] = {option.c_str()};
  const int rc = api.compile(prog, 1, opts);
  const auto log = fetch(prog, api.log_size, api.log);
  if (rc != 0) {
    out.status = CompileOutcome::Status::failed;
    out.message = option + " failed (" + std::to_string(rc) +
                  "): " + std::string(reinterpret_cast<const char*>(log.data()), log.size());
  } else {
    out.status = CompileOutcome::Status::ok;
    out.code = fetch(prog, api.code_size, api.code);
    out.ptx = fetch(prog, api.ptx_size, api.ptx);
  }
  api.destroy(&prog);
  return out;
}

CompileOutcome nvrtc_uncached(std::string_view arch) {
  static std::string tried;
  static std::string loaded;
  static void* lib = open_first("cuda", &tried, &loaded);
  CompileOutcome out;
  out.library = loaded;
  Api api;
  if (lib == nullptr ||
      !(resolve(lib, "nvrtcCreateProgram", &api.create) &&
        resolve(lib, "nvrtcCompileProgram", &api.compile) &&
        resolve(lib, "nvrtcGetCUBINSize", &api.code_size) &&
        resolve(lib, "nvrtcGetCUBIN", &api.code) &&
        resolve(lib, "nvrtcGetPTXSize", &api.ptx_size) && resolve(lib, "nvrtcGetPTX", &api.ptx) &&
        resolve(lib, "nvrtcGetProgramLogSize", &api.log_size) &&
        resolve(lib, "nvrtcGetProgramLog", &api.log) &&
        resolve(lib, "nvrtcDestroyProgram", &api.destroy))) {
    out.message = "NVRTC not loadable: " + (tried.empty() ? std::string("symbols missing") : tried);
    return out;
  }
  return run_compile(api, "--gpu-architecture=" + std::string(arch));
}

// Child side of hiprtc_uncached: writes a status byte and a payload to `fd`, then _exits.
[[noreturn]] void hiprtc_child(int fd, const std::string& option) {
  alarm(120);  // a hung compiler must not hang the suite
  // glibc's abort message for the known hiprtc crash would clutter the test log; the parent
  // reports the signal instead.
  if (const int devnull = open("/dev/null", O_WRONLY); devnull >= 0) dup2(devnull, 2);
  std::string tried;
  std::string loaded;
  char status = 'U';
  std::string payload;
  if (void* lib = open_first("hip", &tried, &loaded)) {
    Api api;
    if (resolve(lib, "hiprtcCreateProgram", &api.create) &&
        resolve(lib, "hiprtcCompileProgram", &api.compile) &&
        resolve(lib, "hiprtcGetCodeSize", &api.code_size) &&
        resolve(lib, "hiprtcGetCode", &api.code) &&
        resolve(lib, "hiprtcGetProgramLogSize", &api.log_size) &&
        resolve(lib, "hiprtcGetProgramLog", &api.log) &&
        resolve(lib, "hiprtcDestroyProgram", &api.destroy)) {
      CompileOutcome r = run_compile(api, option);
      status = r.status == CompileOutcome::Status::ok ? 'O' : 'F';
      payload = status == 'O'
                    ? std::string(reinterpret_cast<const char*>(r.code.data()), r.code.size())
                    : r.message;
    } else {
      payload = "hiprtc symbols missing from libamdhip64";
    }
  } else {
    payload = "hiprtc not loadable: " + tried;
  }
  std::string msg = status + payload;
  for (std::size_t off = 0; off < msg.size();) {
    const ssize_t n = write(fd, msg.data() + off, msg.size() - off);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  _exit(0);
}

CompileOutcome hiprtc_uncached(std::string_view arch) {
  CompileOutcome out;
  const std::string option = "--offload-arch=" + std::string(arch);
  int fds[2];
  if (pipe(fds) != 0) {
    out.message = "pipe failed";
    return out;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    hiprtc_child(fds[1], option);
  }
  close(fds[1]);
  std::string got;
  char buf[65536];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int wstatus = 0;
  if (pid > 0) waitpid(pid, &wstatus, 0);
  if (pid < 0 || got.empty()) {
    out.status = CompileOutcome::Status::crashed;
    out.message =
        option + ": hiprtc child " +
        (pid > 0 && WIFSIGNALED(wstatus)
             ? "died with signal " + std::string(strsignal(WTERMSIG(wstatus)))
         : pid > 0 && WIFEXITED(wstatus)
             ? "exited with status " + std::to_string(WEXITSTATUS(wstatus)) + " and no output"
             : std::string("could not be started"));
    return out;
  }
  const std::string payload = got.substr(1);
  if (got[0] == 'O') {
    out.status = CompileOutcome::Status::ok;
    const auto* p = reinterpret_cast<const std::byte*>(payload.data());
    out.code.assign(p, p + payload.size());
  } else {
    out.status =
        got[0] == 'U' ? CompileOutcome::Status::unavailable : CompileOutcome::Status::failed;
    out.message = payload;
  }
  return out;
}

template <class F>
const CompileOutcome& cached(std::map<std::string, CompileOutcome, std::less<>>& cache,
                             std::string_view arch, F compile) {
  static std::mutex mu;
  std::lock_guard lock(mu);
  auto it = cache.find(arch);
  if (it == cache.end()) it = cache.emplace(std::string(arch), compile(arch)).first;
  return it->second;
}

}  // namespace

const CompileOutcome& nvrtc_compile(std::string_view arch) {
  static std::map<std::string, CompileOutcome, std::less<>> cache;
  return cached(cache, arch, nvrtc_uncached);
}

const CompileOutcome& cubin_compile(std::string_view arch) {
  static std::map<std::string, CompileOutcome, std::less<>> cache;
  return cached(cache, arch, [](std::string_view a) {
    CompileOutcome real = nvrtc_uncached(a);
    if (real.status != CompileOutcome::Status::unavailable) return real;
    CompileOutcome out;
    out.code = synth_cubin(a, std::string(kKernel));
    out.status = out.code.empty() ? CompileOutcome::Status::failed : CompileOutcome::Status::ok;
    out.synthesized = true;
    out.message = "synthesized by the compiler double (" + real.message + ")";
    return out;
  });
}

const CompileOutcome& hiprtc_compile(std::string_view arch) {
  static std::map<std::string, CompileOutcome, std::less<>> cache;
  return cached(cache, arch, hiprtc_uncached);
}

}  // namespace kcache::testing

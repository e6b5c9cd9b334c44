#include "client/fallback.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include "arch/binary_check.hpp"
#include "arch/elf_inspect.hpp"
#include "arch/target.hpp"
#include "common/cache_key.hpp"
#include "common/fd.hpp"
#include "compile/include_rules.hpp"
#include "compile/option_rules.hpp"
#include "compile/request_rules.hpp"

namespace kcache::client {

namespace {

Error cannot_fall_back(const std::string& why) {
  return make_error(Errc::disconnected, "kcached cannot be reached and the request cannot be "
                                        "compiled in-process: " + why);
}

Status write_module(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string staging = dir + "/." + name + ".tmp";
  const int fd = ::open(staging.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
  if (fd < 0) return errno_error(Errc::io, "cannot create " + staging);
  const Fd owned(fd);
  if (auto written = write_all(fd, bytes.data(), bytes.size()); !written.ok()) {
    ::unlink(staging.c_str());
    return written;
  }
  if (::rename(staging.c_str(), (dir + "/" + name).c_str()) != 0) {
    ::unlink(staging.c_str());
    return errno_error(Errc::io, "cannot publish " + dir + "/" + name);
  }
  return {};
}

}  // namespace

Fallback::~Fallback() {
  if (dir_.empty()) return;
  // Only what this client wrote lives there: remove it all, then the directory.
  if (DIR* d = ::opendir(dir_.c_str())) {
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d))
      if (std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..")
        names.emplace_back(e->d_name);
    ::closedir(d);
    for (const auto& n : names) ::unlink((dir_ + "/" + n).c_str());
  }
  ::rmdir(dir_.c_str());
}

Result<std::string> Fallback::directory() {
  if (!dir_.empty()) return dir_;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  std::string tmpl = std::string(runtime != nullptr && *runtime == '/' ? runtime : "/tmp") +
                     "/kcache-fallback-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr)  // mode 0700
    return errno_error(Errc::io, "cannot create a private directory like " + tmpl);
  dir_ = std::move(tmpl);
  return dir_;
}

Result<Compiler*> Fallback::compiler_for(const std::string& backend) {
  auto it = compilers_.find(backend);
  if (it == compilers_.end()) {
    auto loaded = load_compiler(backend);
    if (!loaded.ok()) return loaded.error();  // tried again next time: the library may appear
    it = compilers_.emplace(backend, std::move(loaded).value()).first;
  }
  return it->second.get();
}

Result<GetResult> Fallback::compile(const GetParams& p) {
  if (!p.source) return cannot_fall_back("it has no source");
  if (p.target.empty())
    return cannot_fall_back("it names a device index, and only kcached knows the devices");
  KC_TRY_ASSIGN(const Target target, parse_target(p.target));
  const std::string canonical = target.str();
  const std::string backend(backend_name(target.backend()));

  wire::GetRequest request;  // as the daemon would receive it, for the shared rules
  fill_request(request, p, nullptr);
  KC_TRY(check_request_limits(request, RequestLimits{}));
  KC_TRY(check_compile_options(backend, request.options));
  KC_TRY(check_include_directives(request));

  std::lock_guard lock(mu_);
  KC_TRY_ASSIGN(Compiler* compiler, compiler_for(backend));
  const KeySubject subject{backend, canonical, compiler->identity(), request.name, *request.source};
  const Digest128 key = compute_cache_key(key_input_of(subject, request.options, request.headers));

  wire::ModuleReply module;
  if (const auto found = done_.find(key); found != done_.end()) {
    module = found->second;
  } else {
    wire::CompileJob job;
    job.backend = backend;
    job.identity = compiler->identity();
    job.target = canonical;
    job.name = std::move(request.name);
    job.source = std::move(*request.source);
    job.headers = std::move(request.headers);
    job.options = std::move(request.options);
    const auto t0 = std::chrono::steady_clock::now();
    KC_TRY_ASSIGN(wire::CompileResult compiled, compiler->compile(job));
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - t0);
    {
      std::lock_guard count(count_mu_);
      ++unreported_.compiles;
      unreported_.compile_ms += static_cast<std::uint64_t>(ms.count());
      compiles_.fetch_add(1, std::memory_order_relaxed);
    }
    KC_TRY(check_binary_matches(std::as_bytes(std::span(compiled.binary)), target));
    KC_TRY_ASSIGN(const std::string dir, directory());
    const std::string file = key.hex() + (backend == "hip" ? ".hsaco" : ".cubin");
    KC_TRY(write_module(dir, file, compiled.binary));
    module.path = dir + "/" + file;
    module.size = compiled.binary.size();
    module.digest = digest_of(compiled.binary);
    module.origin = wire::Origin::fallback;
    module.target = canonical;
    module.key = key;
    done_.emplace(key, module);
  }
  GetResult out;
  out.module = std::move(module);
  if (p.want_fd) {
    const int fd = ::open(out.module.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return errno_error(Errc::io, "cannot open " + out.module.path);
    out.fd = Fd(fd);
  }
  return out;
}

FallbackReport Fallback::take_unreported() {
  std::lock_guard lock(count_mu_);
  return std::exchange(unreported_, FallbackReport{});
}

void Fallback::restore_unreported(const FallbackReport& r) {
  std::lock_guard lock(count_mu_);
  unreported_.compiles += r.compiles;
  unreported_.compile_ms += r.compile_ms;
}

}  // namespace kcache::client

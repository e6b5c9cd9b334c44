// NVRTC backend: dlopen'ed, so kcache builds and runs where the CUDA toolkit is absent.
#include <cstddef>

#include "common/dl_library.hpp"
#include "compile/compiler.hpp"
#include "compile/nvrtc_abi.hpp"
#include "compile/program_inputs.hpp"

namespace kcache {

namespace {

using nvrtcResult = nvrtc_abi::Result;
using nvrtcProgram = nvrtc_abi::Program;
using NvrtcApi = nvrtc_abi::Api;
constexpr nvrtcResult kNvrtcSuccess = nvrtc_abi::kSuccess;
constexpr nvrtcResult kNvrtcCompilationError = nvrtc_abi::kCompilation;

class NvrtcCompiler final : public Compiler {
 public:
  NvrtcCompiler(DlLibrary lib, NvrtcApi api, std::string identity)
      : lib_(std::move(lib)), api_(api), identity_(std::move(identity)) {}

  std::string_view backend() const noexcept override { return "cuda"; }
  const std::string& identity() const noexcept override { return identity_; }

  Result<wire::CompileResult> compile(const wire::CompileJob& job) override {
    ProgramInputs in(job, "--gpu-architecture=" + job.target);
    nvrtcProgram prog = nullptr;
    nvrtcResult rc = api_.CreateProgram(&prog, job.source.c_str(), in.program_name(),
                                        in.header_count(), in.header_data(), in.header_names());
    if (rc != kNvrtcSuccess) return failure("nvrtcCreateProgram", rc);
    // The program is destroyed on every path out of here.
    struct Destroy {
      const NvrtcApi& api;
      nvrtcProgram* prog;
      ~Destroy() { api.DestroyProgram(prog); }
    } destroy{api_, &prog};

    rc = api_.CompileProgram(prog, in.option_count(), in.options());
    std::string log = program_log(prog);
    if (rc == kNvrtcCompilationError)
      return make_error(Errc::compile_error, "compilation of '" + job.name + "' for " +
                                                 job.target + " failed", std::move(log));
    if (rc != kNvrtcSuccess) return failure("nvrtcCompileProgram", rc, std::move(log));

    std::size_t size = 0;
    rc = api_.GetCUBINSize(prog, &size);
    if (rc != kNvrtcSuccess) return failure("nvrtcGetCUBINSize", rc, std::move(log));
    if (size == 0)
      return make_error(Errc::compile_error,
                        "NVRTC produced no cubin for " + job.target +
                            " (a virtual architecture gives PTX only)", std::move(log));
    wire::CompileResult out;
    out.binary.resize(size);
    rc = api_.GetCUBIN(prog, out.binary.data());
    if (rc != kNvrtcSuccess) return failure("nvrtcGetCUBIN", rc, std::move(log));
    out.log = std::move(log);
    return out;
  }

 private:
  std::string program_log(nvrtcProgram prog) const {
    std::size_t size = 0;
    if (api_.GetProgramLogSize(prog, &size) != kNvrtcSuccess || size <= 1) return {};
    std::string log(size, '\0');
    if (api_.GetProgramLog(prog, log.data()) != kNvrtcSuccess) return {};
    log.resize(size - 1);  // drop the terminating NUL
    return log;
  }

  Error failure(const char* call, nvrtcResult rc, std::string log = {}) const {
    return make_error(Errc::compiler_failure,
                      std::string(call) + " failed: " + api_.GetErrorString(rc), std::move(log));
  }

  DlLibrary lib_;
  NvrtcApi api_;
  std::string identity_;
};

template <class F>
Status bind(const DlLibrary& lib, F& slot, const char* name) {
  KC_TRY_ASSIGN(slot, lib.symbol<F>(name));
  return {};
}

}  // namespace

Result<std::unique_ptr<Compiler>> load_nvrtc(std::span<const std::string> candidates) {
  KC_TRY_ASSIGN(DlLibrary lib, DlLibrary::open_first("NVRTC", candidates));
  NvrtcApi api{};
  Status bound;
  nvrtc_abi::bind_api(api, [&](auto& slot, const char* name) {
    bound = bind(lib, slot, name);
    return bound.ok();
  });
  KC_TRY(bound);
  int major = 0;
  int minor = 0;
  if (api.Version(&major, &minor) != kNvrtcSuccess)
    return make_error(Errc::unavailable, "nvrtcVersion failed in " + lib.name());
  // Version plus the library file's fingerprint: a toolkit update changes every key.
  std::string identity =
      "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + " (" + library_fingerprint(lib.resolved_path()) + ")";
  return std::unique_ptr<Compiler>(
      std::make_unique<NvrtcCompiler>(std::move(lib), api, std::move(identity)));
}

}  // namespace kcache

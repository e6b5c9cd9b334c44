// hiprtc backend (AMD): dlopen'ed from Debian's libamdhip64 (ROCm 5.x) or a newer ROCm's
// libhiprtc, so kcache builds and runs without ROCm.
#include <cstddef>

#include "common/dl_library.hpp"
#include "compile/compiler.hpp"
#include "compile/program_inputs.hpp"

namespace kcache {

namespace {

using hiprtcResult = int;
using hiprtcProgram = struct HiprtcProgramOpaque*;
constexpr hiprtcResult kHiprtcSuccess = 0;
constexpr hiprtcResult kHiprtcCompilationError = 6;

struct HiprtcApi {
  const char* (*GetErrorString)(hiprtcResult);
  hiprtcResult (*Version)(int*, int*);
  hiprtcResult (*CreateProgram)(hiprtcProgram*, const char*, const char*, int, const char**,
                                const char**);
  hiprtcResult (*DestroyProgram)(hiprtcProgram*);
  hiprtcResult (*CompileProgram)(hiprtcProgram, int, const char**);
  hiprtcResult (*GetCodeSize)(hiprtcProgram, std::size_t*);
  hiprtcResult (*GetCode)(hiprtcProgram, char*);
  hiprtcResult (*GetProgramLogSize)(hiprtcProgram, std::size_t*);
  hiprtcResult (*GetProgramLog)(hiprtcProgram, char*);
};

class HiprtcCompiler final : public Compiler {
 public:
  HiprtcCompiler(DlLibrary lib, HiprtcApi api, std::string identity)
      : lib_(std::move(lib)), api_(api), identity_(std::move(identity)) {}

  std::string_view backend() const noexcept override { return "hip"; }
  const std::string& identity() const noexcept override { return identity_; }

  Result<wire::CompileResult> compile(const wire::CompileJob& job) override {
    ProgramInputs in(job, "--offload-arch=" + job.target);
    hiprtcProgram prog = nullptr;
    hiprtcResult rc = api_.CreateProgram(&prog, job.source.c_str(), in.program_name(),
                                         in.header_count(), in.header_data(), in.header_names());
    if (rc != kHiprtcSuccess) return failure("hiprtcCreateProgram", rc);
    struct Destroy {
      const HiprtcApi& api;
      hiprtcProgram* prog;
      ~Destroy() { api.DestroyProgram(prog); }
    } destroy{api_, &prog};

    rc = api_.CompileProgram(prog, in.option_count(), in.options());
    std::string log = program_log(prog);
    if (rc == kHiprtcCompilationError)
      return make_error(Errc::compile_error, "compilation of '" + job.name + "' for " +
                                                 job.target + " failed", std::move(log));
    if (rc != kHiprtcSuccess) return failure("hiprtcCompileProgram", rc, std::move(log));

    std::size_t size = 0;
    rc = api_.GetCodeSize(prog, &size);
    if (rc != kHiprtcSuccess) return failure("hiprtcGetCodeSize", rc, std::move(log));
    if (size == 0)
      return make_error(Errc::compile_error, "hiprtc produced no code object for " + job.target,
                        std::move(log));
    wire::CompileResult out;
    out.binary.resize(size);
    rc = api_.GetCode(prog, out.binary.data());
    if (rc != kHiprtcSuccess) return failure("hiprtcGetCode", rc, std::move(log));
    out.log = std::move(log);
    return out;
  }

 private:
  std::string program_log(hiprtcProgram prog) const {
    std::size_t size = 0;
    if (api_.GetProgramLogSize(prog, &size) != kHiprtcSuccess || size <= 1) return {};
    std::string log(size, '\0');
    if (api_.GetProgramLog(prog, log.data()) != kHiprtcSuccess) return {};
    while (!log.empty() && log.back() == '\0') log.pop_back();
    return log;
  }

  Error failure(const char* call, hiprtcResult rc, std::string log = {}) const {
    return make_error(Errc::compiler_failure,
                      std::string(call) + " failed: " + api_.GetErrorString(rc), std::move(log));
  }

  DlLibrary lib_;
  HiprtcApi api_;
  std::string identity_;
};

template <class F>
Status bind(const DlLibrary& lib, F& slot, const char* name) {
  KC_TRY_ASSIGN(slot, lib.symbol<F>(name));
  return {};
}

}  // namespace

Result<std::unique_ptr<Compiler>> load_hiprtc(std::span<const std::string> candidates) {
  KC_TRY_ASSIGN(DlLibrary lib, DlLibrary::open_first("hiprtc", candidates));
  HiprtcApi api{};
  KC_TRY(bind(lib, api.GetErrorString, "hiprtcGetErrorString"));
  KC_TRY(bind(lib, api.Version, "hiprtcVersion"));
  KC_TRY(bind(lib, api.CreateProgram, "hiprtcCreateProgram"));
  KC_TRY(bind(lib, api.DestroyProgram, "hiprtcDestroyProgram"));
  KC_TRY(bind(lib, api.CompileProgram, "hiprtcCompileProgram"));
  KC_TRY(bind(lib, api.GetCodeSize, "hiprtcGetCodeSize"));
  KC_TRY(bind(lib, api.GetCode, "hiprtcGetCode"));
  KC_TRY(bind(lib, api.GetProgramLogSize, "hiprtcGetProgramLogSize"));
  KC_TRY(bind(lib, api.GetProgramLog, "hiprtcGetProgramLog"));
  int major = 0;
  int minor = 0;
  if (api.Version(&major, &minor) != kHiprtcSuccess)
    return make_error(Errc::unavailable, "hiprtcVersion failed in " + lib.name());
  std::string identity =
      "hiprtc " + std::to_string(major) + "." + std::to_string(minor) + " (" + library_fingerprint(lib.resolved_path()) + ")";
  return std::unique_ptr<Compiler>(
      std::make_unique<HiprtcCompiler>(std::move(lib), api, std::move(identity)));
}

}  // namespace kcache

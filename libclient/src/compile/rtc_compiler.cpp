// The RTC backend (compiler.hpp), one implementation over NVRTC (CUDA) and hiprtc (AMD): both
// dlopen'ed, so kcache builds and runs where neither toolkit is installed. Debian's
// libamdhip64 (ROCm 5.x) or a newer ROCm's libhiprtc serves hiprtc.
#include <cstddef>

#include "common/dl_library.hpp"
#include "compile/compiler.hpp"
#include "compile/program_inputs.hpp"
#include "compile/rtc_abi.hpp"

namespace kcache {

namespace {

using rtc_abi::Api;
using rtc_abi::Program;

// What differs between the two libraries besides their symbol names.
struct Dialect {
  rtc_abi::Names names;
  std::string_view backend;  // "cuda" | "hip"
  const char* library;       // for errors: "NVRTC"
  const char* target_flag;   // the option naming the target
  const char* no_code;       // why an empty output happens: "produced no cubin for"
  const char* no_code_hint;  // appended after the target
};

constexpr Dialect kNvrtcDialect{rtc_abi::kNvrtc, "cuda", "NVRTC", "--gpu-architecture=",
                                "NVRTC produced no cubin for ",
                                " (a virtual architecture gives PTX only)"};
constexpr Dialect kHiprtcDialect{rtc_abi::kHiprtc, "hip", "hiprtc", "--offload-arch=",
                                 "hiprtc produced no code object for ", ""};

class RtcCompiler final : public Compiler {
 public:
  RtcCompiler(const Dialect& dialect, DlLibrary lib, Api api, std::string identity)
      : dialect_(dialect), lib_(std::move(lib)), api_(api), identity_(std::move(identity)) {}

  std::string_view backend() const noexcept override { return dialect_.backend; }
  const std::string& identity() const noexcept override { return identity_; }

  Result<wire::CompileResult> compile(const wire::CompileJob& job) override {
    ProgramInputs in(job, dialect_.target_flag + job.target);
    Program prog = nullptr;
    rtc_abi::Result rc = api_.CreateProgram(&prog, job.source.c_str(), in.program_name(),
                                            in.header_count(), in.header_data(), in.header_names());
    if (rc != rtc_abi::kSuccess) return failure("CreateProgram", rc);
    // The program is destroyed on every path out of here.
    struct Destroy {
      const Api& api;
      Program* prog;
      ~Destroy() { api.DestroyProgram(prog); }
    } destroy{api_, &prog};

    rc = api_.CompileProgram(prog, in.option_count(), in.options());
    std::string log = program_log(prog);
    if (rc == rtc_abi::kCompilation)
      return make_error(Errc::compile_error, "compilation of '" + job.name + "' for " +
                                                 job.target + " failed", std::move(log));
    if (rc != rtc_abi::kSuccess) return failure("CompileProgram", rc, std::move(log));

    std::size_t size = 0;
    rc = api_.GetCodeSize(prog, &size);
    if (rc != rtc_abi::kSuccess) return failure(code_call("Size").c_str(), rc, std::move(log));
    if (size == 0)
      return make_error(Errc::compile_error,
                        dialect_.no_code + job.target + dialect_.no_code_hint, std::move(log));
    wire::CompileResult out;
    out.binary.resize(size);
    rc = api_.GetCode(prog, out.binary.data());
    if (rc != rtc_abi::kSuccess) return failure(code_call("").c_str(), rc, std::move(log));
    out.log = std::move(log);
    return out;
  }

 private:
  std::string program_log(Program prog) const {
    std::size_t size = 0;
    if (api_.GetProgramLogSize(prog, &size) != rtc_abi::kSuccess || size <= 1) return {};
    std::string log(size, '\0');
    if (api_.GetProgramLog(prog, log.data()) != rtc_abi::kSuccess) return {};
    while (!log.empty() && log.back() == '\0') log.pop_back();  // the terminating NUL(s)
    return log;
  }

  std::string code_call(const char* suffix) const {
    return std::string("Get") + dialect_.names.code + suffix;
  }

  Error failure(const char* call, rtc_abi::Result rc, std::string log = {}) const {
    return make_error(Errc::compiler_failure,
                      std::string(dialect_.names.prefix) + call + " failed: " +
                          api_.GetErrorString(rc),
                      std::move(log));
  }

  const Dialect& dialect_;
  DlLibrary lib_;
  Api api_;
  std::string identity_;
};

Result<std::unique_ptr<Compiler>> load_rtc(const Dialect& dialect,
                                           std::span<const std::string> candidates) {
  KC_TRY_ASSIGN(DlLibrary lib, DlLibrary::open_first(dialect.library, candidates));
  Api api{};
  Status bound;
  rtc_abi::bind_api(api, dialect.names, [&](auto& slot, const char* name) {
    auto symbol = lib.symbol<std::remove_reference_t<decltype(slot)>>(name);
    if (symbol.ok()) slot = *symbol;
    else bound = symbol.error();
    return symbol.ok();
  });
  KC_TRY(bound);
  int major = 0;
  int minor = 0;
  if (api.Version(&major, &minor) != rtc_abi::kSuccess)
    return make_error(Errc::unavailable, std::string(dialect.names.prefix) + "Version failed in " + lib.name());
  // Version plus the library file's fingerprint: a toolkit update changes every key.
  std::string identity = std::string(dialect.names.prefix) + " " + std::to_string(major) + "." +
                         std::to_string(minor) + " (" + library_fingerprint(lib.resolved_path()) + ")";
  return std::unique_ptr<Compiler>(
      std::make_unique<RtcCompiler>(dialect, std::move(lib), api, std::move(identity)));
}

}  // namespace

Result<std::unique_ptr<Compiler>> load_nvrtc(std::span<const std::string> candidates) {
  return load_rtc(kNvrtcDialect, candidates);
}

Result<std::unique_ptr<Compiler>> load_hiprtc(std::span<const std::string> candidates) {
  return load_rtc(kHiprtcDialect, candidates);
}

}  // namespace kcache

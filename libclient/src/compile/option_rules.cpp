#include "compile/option_rules.hpp"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <optional>

#include "common/text.hpp"

namespace kcache {

namespace {

// The shape a value must have. `none`: a flag, no value.
enum class Value : std::uint8_t {
  none, boolean, on_off, cuda_std, hip_std, reg_count, diag_numbers, macro, ptxas, fp_contract,
  fast_compile, opt_info
};

struct Allowed {
  std::string_view name;
  Value value;
};

// NVRTC 12/13 (docs/compile-options.md says what each does and why it is safe: none reads or
// writes a file or chooses the target).
constexpr Allowed kNvrtc[] = {
    {"-G", Value::none}, {"--device-debug", Value::none},
    {"-lineinfo", Value::none}, {"--generate-line-info", Value::none},
    {"-use_fast_math", Value::none}, {"--use_fast_math", Value::none},
    {"-w", Value::none}, {"--disable-warnings", Value::none},
    {"-restrict", Value::none}, {"--restrict", Value::none},
    {"-default-device", Value::none}, {"--device-as-default-execution-space", Value::none},
    {"-ewp", Value::none}, {"--extensible-whole-program", Value::none},
    {"-dlto", Value::none}, {"--dlink-time-opt", Value::none},
    {"-device-int128", Value::none}, {"--device-int128", Value::none},
    {"-extra-device-vectorization", Value::none}, {"--extra-device-vectorization", Value::none},
    {"-err-no", Value::none}, {"--display-error-number", Value::none},
    {"-no-err-no", Value::none}, {"--no-display-error-number", Value::none},
    {"-minimal", Value::none}, {"--minimal", Value::none},
    {"-fdevice-syntax-only", Value::none}, {"--fdevice-syntax-only", Value::none},
    {"-ftz", Value::boolean}, {"--ftz", Value::boolean},
    {"-prec-sqrt", Value::boolean}, {"--prec-sqrt", Value::boolean},
    {"-prec-div", Value::boolean}, {"--prec-div", Value::boolean},
    {"-fmad", Value::boolean}, {"--fmad", Value::boolean},
    {"-rdc", Value::boolean}, {"--relocatable-device-code", Value::boolean},
    {"-builtin-move-forward", Value::boolean}, {"--builtin-move-forward", Value::boolean},
    {"-builtin-initializer-list", Value::boolean}, {"--builtin-initializer-list", Value::boolean},
    {"-dopt", Value::on_off}, {"--dopt", Value::on_off},
    {"-std", Value::cuda_std}, {"--std", Value::cuda_std},
    {"-maxrregcount", Value::reg_count}, {"--maxrregcount", Value::reg_count},
    {"-diag-error", Value::diag_numbers}, {"--diag-error", Value::diag_numbers},
    {"-diag-suppress", Value::diag_numbers}, {"--diag-suppress", Value::diag_numbers},
    {"-diag-warn", Value::diag_numbers}, {"--diag-warn", Value::diag_numbers},
    {"-Xptxas", Value::ptxas}, {"--ptxas-options", Value::ptxas},
    {"-Ofast-compile", Value::fast_compile}, {"--Ofast-compile", Value::fast_compile},
    {"-opt-info", Value::opt_info}, {"--optimization-info", Value::opt_info},
    {"-D", Value::macro}, {"--define-macro", Value::macro},
    {"-U", Value::macro}, {"--undefine-macro", Value::macro},
};

// hiprtc (clang): code generation and diagnostics only.
constexpr Allowed kHiprtc[] = {
    {"-O0", Value::none}, {"-O1", Value::none}, {"-O2", Value::none}, {"-O3", Value::none},
    {"-Os", Value::none}, {"-Oz", Value::none},
    {"-g", Value::none}, {"-g0", Value::none}, {"-w", Value::none},
    {"-ffast-math", Value::none}, {"-fno-fast-math", Value::none},
    {"-ffinite-math-only", Value::none}, {"-fno-finite-math-only", Value::none},
    {"-fgpu-rdc", Value::none}, {"-fno-gpu-rdc", Value::none},
    {"-fgpu-flush-denormals-to-zero", Value::none}, {"-fno-gpu-flush-denormals-to-zero", Value::none},
    {"-munsafe-fp-atomics", Value::none}, {"-mno-unsafe-fp-atomics", Value::none},
    {"-mcumode", Value::none}, {"-mno-cumode", Value::none},
    {"-mwavefrontsize64", Value::none}, {"-mno-wavefrontsize64", Value::none},
    {"-ffp-contract", Value::fp_contract}, {"-std", Value::hip_std},
    {"-D", Value::macro}, {"-U", Value::macro},
};

bool one_of(std::string_view v, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

bool is_number(std::string_view v, unsigned lo, unsigned hi) {
  unsigned n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  return ec == std::errc() && end == v.data() + v.size() && !v.empty() && n >= lo && n <= hi;
}

bool is_identifier(std::string_view v) {
  const auto word = [](char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  return !v.empty() && word(v[0]) && std::all_of(v.begin(), v.end(), [&](char c) { return word(c) || digit(c); });
}

// `NAME` or `NAME=VALUE`; a value may be any text on one line that holds no file probe
// (`__has_include`, `__has_embed`, `_Pragma`: the source's include rules, applied here too).
bool is_macro(std::string_view v) {
  const auto eq = v.find('=');
  if (!is_identifier(v.substr(0, eq))) return false;
  if (eq == std::string_view::npos) return true;
  const std::string_view value = v.substr(eq + 1);
  for (const std::string_view probe : {"__has_include", "__has_embed", "_Pragma"})
    if (value.find(probe) != std::string_view::npos) return false;
  return value.find_first_of(std::string_view("\0\n\r", 3)) == std::string_view::npos;
}

bool valid_value(Value kind, std::string_view v) {
  switch (kind) {
    case Value::none: return false;
    case Value::boolean: return one_of(v, {"true", "false"});
    case Value::on_off: return one_of(v, {"on", "off"});
    case Value::cuda_std: return one_of(v, {"c++03", "c++11", "c++14", "c++17", "c++20"});
    case Value::hip_std:
      return one_of(v, {"c++11", "c++14", "c++17", "c++20", "gnu++11", "gnu++14", "gnu++17", "gnu++20"});
    case Value::reg_count: return is_number(v, 1, 255);
    case Value::fp_contract: return one_of(v, {"fast", "on", "off", "fast-honor-pragmas"});
    case Value::fast_compile: return one_of(v, {"0", "min", "mid", "max"});
    case Value::opt_info: return v == "inline";
    case Value::macro: return is_macro(v);
    case Value::diag_numbers:
    case Value::ptxas: {
      // A comma-separated list, each item checked.
      for (std::size_t at = 0; at <= v.size();) {
        const std::size_t comma = std::min(v.find(',', at), v.size());
        const std::string_view item = v.substr(at, comma - at);
        const bool ok = kind == Value::diag_numbers
                            ? is_number(item, 0, 1u << 20)
                            : one_of(item, {"-v", "--verbose", "--warn-on-spills",
                                            "--warn-on-local-memory-usage",
                                            "--warn-on-double-precision-use", "-O0", "-O1",
                                            "-O2", "-O3"});
        if (!ok) return false;
        at = comma + 1;
      }
      return true;
    }
  }
  return false;
}

// hiprtc's warning switches: `-Wname`, `-Wno-name`, `-Werror`, `-Werror=name`; never `-Wl,…`,
// `-Wa,…`, `-Wp,…` (options for the linker, assembler, preprocessor).
bool is_warning_switch(std::string_view o) {
  if (!o.starts_with("-W") || o.size() < 3) return false;
  const auto name_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '='; };
  return std::all_of(o.begin() + 2, o.end(), name_char) && o[2] != '-' && o[2] != '=';
}

std::optional<std::string> why_never(std::string_view o) {
  const auto any = [&](std::initializer_list<std::string_view> names) {
    return std::any_of(names.begin(), names.end(), [&](std::string_view n) {
      return o == n || (o.starts_with(n) && (o[n.size()] == '=' || n.size() <= 2 || n == "-arch"));
    });
  };
  if (any({"-arch", "--gpu-architecture", "--offload-arch", "-offload-arch", "-march", "-mcpu",
           "--cuda-gpu-arch", "-target", "--target"}))
    return "the target comes from the request";
  if (any({"-o", "--output", "--output-dir", "-time", "--time", "-pch", "--pch", "--create-pch",
           "-create-pch", "--use-pch", "-use-pch", "--pch-dir", "-pch-dir",
           "--fdevice-time-trace", "-fdevice-time-trace", "-ftime-trace", "-MF", "-MD", "-MMD",
           "-save-temps", "--save-temps", "-keep", "--keep", "--keep-dir"}))
    return "kcached owns every file a compile writes";
  if (any({"-include", "--pre-include", "-imacros", "-iquote", "-idirafter", "--sysroot",
           "-isysroot", "-no-source-include", "--no-source-include"}))
    return "headers come only from the request and the include roots";
  if (any({"-fplugin", "-Xclang", "-mllvm", "-Xlinker", "-Xassembler", "-Xpreprocessor",
           "-load", "-B", "--hip-path", "--rocm-path", "-resource-dir"}) ||
      o.starts_with("-Wl,") || o.starts_with("-Wa,") || o.starts_with("-Wp,") ||
      o.starts_with("-fpass-plugin"))
    return "it would load code or pass options to another tool";
  return std::nullopt;
}

// The directory an include option names: `-I/x`, `-isystem/x`, `--include-path=/x`, or the
// next option after a bare `-I`, `-isystem`, `--include-path`. `*consumed` says whether the
// next option was the value. Nullopt: `option` does not name an include directory.
std::optional<std::string_view> include_dir(std::span<const std::string> options, std::size_t i,
                                            bool* consumed) {
  const std::string_view o = options[i];
  *consumed = false;
  for (const std::string_view flag : {"-isystem", "-I", "--include-path"}) {
    if (o == flag) {
      *consumed = true;
      return i + 1 < options.size() ? std::string_view(options[i + 1]) : std::string_view();
    }
    if (!o.starts_with(flag)) continue;
    std::string_view rest = o.substr(flag.size());
    if (flag == "--include-path") {
      if (!rest.starts_with('=')) return std::nullopt;
      rest.remove_prefix(1);
    }
    return rest;
  }
  return std::nullopt;
}

// Whether `o` (and, for a bare `-D`/`-U`, the next option: `*consumed`) is allowed.
bool allowed(std::span<const Allowed> table, bool hip, std::span<const std::string> options,
             std::size_t i, bool* consumed) {
  const std::string_view o = options[i];
  *consumed = false;
  if (hip && is_warning_switch(o)) return true;
  for (const Allowed& a : table) {
    if (o == a.name) {
      if (a.value == Value::none) return true;
      if (a.value != Value::macro || i + 1 >= options.size()) return false;
      *consumed = true;  // `-D NAME`: the value is the next option
      return valid_value(a.value, options[i + 1]);
    }
    if (a.value == Value::none || !o.starts_with(a.name)) continue;
    std::string_view rest = o.substr(a.name.size());
    const bool glued = a.value == Value::macro && a.name.size() == 2;  // -DNAME, -UNAME
    if (!glued) {
      if (!rest.starts_with('=')) continue;
      rest.remove_prefix(1);
    }
    return valid_value(a.value, rest);
  }
  return false;
}

}  // namespace

Status check_compile_options(std::string_view backend, std::span<const std::string> options,
                             const IncludeDirCheck& allow_include) {
  const bool hip = backend == "hip";
  if (!hip && backend != "cuda")
    return make_error(Errc::invalid_argument, "no compile options are known for backend '" +
                                                  std::string(backend) + "'");
  const std::span<const Allowed> table = hip ? std::span<const Allowed>(kHiprtc) : std::span<const Allowed>(kNvrtc);
  const char* compiler = hip ? "hiprtc" : "NVRTC";
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string& o = options[i];
    bool consumed = false;
    if (const auto dir = include_dir(options, i, &consumed)) {
      if (allow_include && !dir->empty() && allow_include(*dir)) {
        if (consumed) ++i;
        continue;
      }
      return make_error(Errc::invalid_argument,
                        "option '" + printable(o) + (consumed && i + 1 < options.size() ? " " + printable(options[i + 1]) : "") +
                            "' is not allowed: headers come from the request or from an include "
                            "root kcached allows (include_roots), and this directory is in none");
    }
    if (allowed(table, hip, options, i, &consumed)) {
      if (consumed) ++i;
      continue;
    }
    if (const auto why = why_never(o))
      return make_error(Errc::invalid_argument, "option '" + printable(o) + "' is not allowed: " + *why);
    return make_error(Errc::invalid_argument,
                      "option '" + printable(o) + "' is not allowed for " + compiler +
                          " (an unknown option, or a value of the wrong form); the options a "
                          "request may pass are listed in docs/compile-options.md");
  }
  return {};
}

}  // namespace kcache

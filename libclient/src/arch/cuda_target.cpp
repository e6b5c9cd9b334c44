// arch/cuda_target.cpp — parsing and normalizing CUDA target spellings.
#include "arch/cuda_target.hpp"

#include <cctype>

#include "arch/text_util.hpp"

namespace kcache {
namespace {

constexpr std::string_view kSpellings = "expected sm_XY[a|f], XY[a|f], compute_XY[a|f] or X.Y[a|f]";

Error bad_target(std::string_view text, std::string_view why) {
  return make_error(Errc::invalid_argument,
                    "invalid CUDA target '" + std::string(text) + "': " + std::string(why));
}

// Parses "9" / "12" (1-2 digits, no leading zero) into major.
bool parse_major(std::string_view digits, int* major) {
  if (digits.empty() || digits.size() > 2 || !all_digits(digits) || digits[0] == '0') return false;
  *major = digits.size() == 1 ? digits[0] - '0' : (digits[0] - '0') * 10 + (digits[1] - '0');
  return true;
}

// "X.Y" with a one-digit minor: the compact spelling cannot express a two-digit minor, so
// accepting "12.10" here would create targets that have no sm_ name.
bool parse_dotted(std::string_view body, int* major, int* minor) {
  const auto dot = body.find('.');
  if (dot == std::string_view::npos) return false;
  const std::string_view minor_text = body.substr(dot + 1);
  if (minor_text.size() != 1 || !all_digits(minor_text)) return false;
  if (!parse_major(body.substr(0, dot), major)) return false;
  *minor = minor_text[0] - '0';
  return true;
}

// "90" / "121": the last digit is the minor (reference/arch.md), so "1200" is invalid.
bool parse_compact(std::string_view body, int* major, int* minor) {
  if (body.size() < 2 || body.size() > 3 || !all_digits(body)) return false;
  if (!parse_major(body.substr(0, body.size() - 1), major)) return false;
  *minor = body.back() - '0';
  return true;
}

}  // namespace

std::string_view cuda_suffix_text(CudaSuffix suffix) noexcept {
  switch (suffix) {
    case CudaSuffix::arch:
      return "a";
    case CudaSuffix::family:
      return "f";
    case CudaSuffix::none:
      break;
  }
  return "";
}

std::string CudaCapability::str() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string CudaTarget::str() const {
  return "sm_" + std::to_string(sm()) + std::string(cuda_suffix_text(suffix));
}

Result<CudaTarget> parse_cuda_target(std::string_view text) {
  if (text.empty()) return bad_target(text, "empty");
  const std::string lower = to_lower(text);
  std::string_view body = lower;
  bool prefixed = false;
  for (std::string_view prefix : {"compute_", "sm_", "sm"}) {
    if (body.starts_with(prefix)) {
      body.remove_prefix(prefix.size());
      prefixed = true;
      break;
    }
  }
  CudaTarget target;
  if (!body.empty() && (body.back() == 'a' || body.back() == 'f')) {
    target.suffix = body.back() == 'a' ? CudaSuffix::arch : CudaSuffix::family;
    body.remove_suffix(1);
  }
  // A dotted body only stands alone ("9.0a"); "sm_9.0" mixes two spellings.
  const bool ok = body.find('.') != std::string_view::npos
                      ? !prefixed && parse_dotted(body, &target.major, &target.minor)
                      : parse_compact(body, &target.major, &target.minor);
  if (!ok) return bad_target(text, kSpellings);
  // NVIDIA defines arch-specific targets from Hopper and family targets from Blackwell on;
  // nothing can compile `sm_86a`, so a manifest naming one is wrong rather than exotic.
  if (target.suffix == CudaSuffix::arch && target.major < 9)
    return bad_target(text, "the 'a' suffix exists only for sm_90 and newer");
  if (target.suffix == CudaSuffix::family && target.major < 10)
    return bad_target(text, "the 'f' suffix exists only for sm_100 and newer");
  return target;
}

Result<CudaCapability> parse_cuda_capability(std::string_view text) {
  CudaCapability cap;
  if (!parse_dotted(text, &cap.major, &cap.minor))
    return make_error(Errc::invalid_argument, "invalid compute capability '" + std::string(text) +
                                                  "': expected P.Q such as 9.0 or 12.1");
  return cap;
}

CudaTarget device_compile_target(CudaCapability device) noexcept {
  CudaTarget t{device.major, device.minor, CudaSuffix::none};
  if (device.major == 9 || device.major == 10 || device.major == 11) {
    t.suffix = CudaSuffix::arch;
  } else if (device.major == 12) {
    // 12.0 compiles family code so one cubin also serves 12.1 devices.
    t.suffix = device.minor == 0 ? CudaSuffix::family : CudaSuffix::arch;
  } else if (device.major > 12) {
    // Not in arch.md: newer majors follow the Blackwell pattern until NVIDIA says otherwise.
    t.suffix = CudaSuffix::arch;
  }
  return t;
}

}  // namespace kcache

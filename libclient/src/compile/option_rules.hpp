// compile/option_rules.hpp — which compiler options a request may pass (DESIGN §9): an
// allowlist per backend, checked by the daemon for every compile and by libkcache's
// in-process fallback alike. docs/compile-options.md lists every allowed option and why.
//
// Contract: check_compile_options passes only options in the backend's allowlist, each with a
// value of the allowed shape (a boolean, a number in range, one of a set, a macro name), and
// include directories the daemon allows; anything else fails with Errc::invalid_argument
// naming the option and why. Never allowed: options that choose the target (it comes from the
// request), name an output, time-trace, dependency or PCH file (kcached owns every file),
// pre-include a path, load a plugin, or hand options to another tool (`-Xclang`, `-mllvm`,
// `-Wl,`…). An unknown backend allows no option.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "kcache/result.hpp"

namespace kcache {

// Whether an include directory an option names may be used (the daemon's include_roots).
using IncludeDirCheck = std::function<bool(std::string_view dir)>;

// `backend`: "cuda" (NVRTC) or "hip" (hiprtc). With `allow_include`, `-I DIR`, `-IDIR`,
// `-isystem DIR` and `--include-path=DIR` pass when it allows DIR and fail naming
// include_roots when not; without, every include option fails.
Status check_compile_options(std::string_view backend, std::span<const std::string> options,
                             const IncludeDirCheck& allow_include = {});

}  // namespace kcache

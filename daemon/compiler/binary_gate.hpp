// binary_gate.hpp — the gate every binary passes before the daemon publishes it.
//
// Contract: check_module_binary(bytes, target) succeeds only for one native module (a cubin
// or an AMD code object; no PTX-only, fatbin or bundle) built for `target` (a canonical
// target string), by the rules of arch/elf_inspect.hpp's check_binary_matches
// (docs/targets.md). Otherwise Errc::corrupt with the reason.
#pragma once

#include <string_view>

#include "kcache/result.hpp"

namespace kcache::daemon {

Status check_module_binary(std::string_view bytes, std::string_view target);

}  // namespace kcache::daemon

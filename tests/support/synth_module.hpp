// synth_module.hpp — module binaries made without a GPU compiler, for the compiler double
// (tests/fakes/fake_nvrtc.cpp) and the test helpers that need cubins where NVRTC is absent.
//
// Contract: `synth_cubin(arch, payload)` returns a cubin image as CUDA 13's NVRTC lays one out
// for `arch` (sm_<digits>[a|f]: e_flags with the SM, a ptxas note naming the exact target, the
// .nv.compat arch-specific attribute, an executable .text holding `payload`), so kcached's
// publishing gate (check_binary_matches) accepts it for exactly that target; distinct payloads
// give distinct bytes. An `arch` of another shape gives an empty result.
#pragma once

#include <string_view>

#include "elf_builder.hpp"

namespace kcache::testing {

Bytes synth_cubin(std::string_view arch, std::string_view payload);

}  // namespace kcache::testing

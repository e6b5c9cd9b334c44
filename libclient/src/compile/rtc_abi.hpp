// nvrtc_abi.hpp — the subset of nvrtc.h kcache uses, declared here so no CUDA header is needed
// to build: result codes, the entry points, and the one list of their names.
//
// Shared by the NVRTC backend (compile/nvrtc.cpp), which dlopens NVRTC, and the test-only
// compiler double (tests/fakes/fake_nvrtc.cpp), which implements the same ABI and forwards to
// a real NVRTC through it.
#pragma once

#include <cstddef>

namespace kcache::nvrtc_abi {

using Result = int;                     // nvrtcResult
using Program = struct ProgramHandle*;  // nvrtcProgram: opaque to its users

// nvrtcResult values, in nvrtc.h's order.
enum : Result {
  kSuccess = 0,
  kOutOfMemory = 1,
  kProgramCreationFailure = 2,
  kInvalidInput = 3,
  kInvalidProgram = 4,
  kInvalidOption = 5,
  kCompilation = 6,
};

struct Api {
  const char* (*GetErrorString)(Result);
  Result (*Version)(int*, int*);
  Result (*CreateProgram)(Program*, const char*, const char*, int, const char* const*,
                          const char* const*);
  Result (*DestroyProgram)(Program*);
  Result (*CompileProgram)(Program, int, const char* const*);
  Result (*GetCUBINSize)(Program, std::size_t*);
  Result (*GetCUBIN)(Program, char*);
  Result (*GetProgramLogSize)(Program, std::size_t*);
  Result (*GetProgramLog)(Program, char*);
};

// Calls bind(slot, "nvrtcName") for every entry point of `api`, in order, until one returns
// false; returns whether all were bound.
template <class Bind>
bool bind_api(Api& api, Bind&& bind) {
  return bind(api.GetErrorString, "nvrtcGetErrorString") && bind(api.Version, "nvrtcVersion") &&
         bind(api.CreateProgram, "nvrtcCreateProgram") &&
         bind(api.DestroyProgram, "nvrtcDestroyProgram") &&
         bind(api.CompileProgram, "nvrtcCompileProgram") &&
         bind(api.GetCUBINSize, "nvrtcGetCUBINSize") && bind(api.GetCUBIN, "nvrtcGetCUBIN") &&
         bind(api.GetProgramLogSize, "nvrtcGetProgramLogSize") &&
         bind(api.GetProgramLog, "nvrtcGetProgramLog");
}

}  // namespace kcache::nvrtc_abi

// rtc_abi.hpp — the subset of nvrtc.h and hiprtc.h kcache uses, declared here so no CUDA or
// ROCm header is needed to build: result codes, the entry points, and the one list of their
// names. The two libraries have the same calls under two prefixes (hiprtc was made after
// NVRTC); only the code getter's name differs ("GetCUBIN" / "GetCode").
//
// Shared by the one RTC backend (compile/rtc_compiler.cpp), which dlopens either library, and
// the test-only compiler double (tests/fakes/fake_nvrtc.cpp), which implements NVRTC's ABI
// and forwards to a real NVRTC through it.
#pragma once

#include <cstddef>
#include <string>

namespace kcache::rtc_abi {

using Result = int;                     // nvrtcResult / hiprtcResult
using Program = struct ProgramHandle*;  // nvrtcProgram / hiprtcProgram: opaque to its users

// Result values, in nvrtc.h's order; hiprtc.h uses the same numbers for these.
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
  Result (*GetCodeSize)(Program, std::size_t*);  // nvrtcGetCUBINSize / hiprtcGetCodeSize
  Result (*GetCode)(Program, char*);             // nvrtcGetCUBIN / hiprtcGetCode
  Result (*GetProgramLogSize)(Program, std::size_t*);
  Result (*GetProgramLog)(Program, char*);
};

// How a library spells its entry points.
struct Names {
  const char* prefix;  // "nvrtc"
  const char* code;    // "CUBIN": nvrtcGetCUBIN, nvrtcGetCUBINSize
};
inline constexpr Names kNvrtc{"nvrtc", "CUBIN"};
inline constexpr Names kHiprtc{"hiprtc", "Code"};

// Calls bind(slot, "<prefix>Name") for every entry point of `api`, in order, until one returns
// false; returns whether all were bound.
template <class Bind>
bool bind_api(Api& api, const Names& names, Bind&& bind) {
  const auto name = [&](const std::string& rest) { return std::string(names.prefix) + rest; };
  const std::string code(names.code);
  return bind(api.GetErrorString, name("GetErrorString").c_str()) &&
         bind(api.Version, name("Version").c_str()) &&
         bind(api.CreateProgram, name("CreateProgram").c_str()) &&
         bind(api.DestroyProgram, name("DestroyProgram").c_str()) &&
         bind(api.CompileProgram, name("CompileProgram").c_str()) &&
         bind(api.GetCodeSize, name("Get" + code + "Size").c_str()) &&
         bind(api.GetCode, name("Get" + code).c_str()) &&
         bind(api.GetProgramLogSize, name("GetProgramLogSize").c_str()) &&
         bind(api.GetProgramLog, name("GetProgramLog").c_str());
}

}  // namespace kcache::rtc_abi

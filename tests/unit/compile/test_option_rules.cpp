// The compile option allowlists (compile/option_rules.hpp): what each backend lets through,
// and that everything that could read, write, load code or choose the target is refused with
// the option named.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compile/option_rules.hpp"

namespace kcache {
namespace {

Status check(const char* backend, std::vector<std::string> options) {
  return check_compile_options(backend, options);
}

TEST(OptionRules, NvrtcAllowsCodeGenerationAndDiagnosticOptions) {
  for (const char* good :
       {"-lineinfo", "--use_fast_math", "-DN=4", "-DNAME", "--define-macro=X=a b", "-UX",
        "-std=c++17", "--std=c++20", "--ftz=true", "-G", "--fmad=false", "-opt-info=inline",
        "-default-device", "--maxrregcount=64", "-dopt=on", "-rdc=true", "--diag-suppress=177,550",
        "-Xptxas=-v,--warn-on-spills", "--ptxas-options=-O2", "-Ofast-compile=max", "-w"}) {
    EXPECT_TRUE(check("cuda", {good}).ok()) << good << ": " << check("cuda", {good}).error().message;
  }
  EXPECT_TRUE(check("cuda", {"-D", "N=4", "-U", "M"}).ok());
}

TEST(OptionRules, HiprtcAllowsCodeGenerationAndWarningSwitches) {
  for (const char* good : {"-O3", "-Os", "-ffast-math", "-fgpu-rdc", "-std=c++17", "-DN=4",
                           "-ffp-contract=fast", "-mwavefrontsize64", "-Wall", "-Wno-unused-variable",
                           "-Werror", "-Werror=return-type", "-w", "-g"}) {
    EXPECT_TRUE(check("hip", {good}).ok()) << good << ": " << check("hip", {good}).error().message;
  }
  EXPECT_TRUE(check("hip", {"-D", "N=4"}).ok());
}

TEST(OptionRules, OptionsThatWriteReadOrLoadAnythingAreRefusedNamingTheOption) {
  const std::pair<const char*, const char*> attacks[] = {
      {"hip", "-fplugin=/tmp/evil.so"}, {"hip", "-Xclang"}, {"hip", "-mllvm"},
      {"hip", "-Wl,--script=/tmp/x"}, {"hip", "-Wp,-MD,/tmp/x"}, {"hip", "-include"},
      {"hip", "-ftime-trace"}, {"hip", "-save-temps"}, {"hip", "-B/tmp"}, {"hip", "-fpass-plugin=/x.so"},
      {"cuda", "-time=/etc/x"}, {"cuda", "--create-pch=/tmp/x.pch"}, {"cuda", "--use-pch"},
      {"cuda", "--pch-dir=/tmp"}, {"cuda", "--fdevice-time-trace=/tmp/t"}, {"cuda", "-include"},
      {"cuda", "--pre-include=/etc/shadow"}, {"cuda", "-o"}, {"cuda", "-o/tmp/x"},
      {"cuda", "--output-dir=/tmp"}, {"cuda", "-MF/tmp/deps"}, {"cuda", "--keep"},
      {"cuda", "-arch=sm_80"}, {"cuda", "-archsm_80"}, {"cuda", "--gpu-architecture=sm_80"},
      {"hip", "--offload-arch=gfx90a"}, {"cuda", "-split-compile=0"}, {"cuda", "-Xptxas=--output-file=/x"},
      {"cuda", "-I/usr/include"}, {"hip", "-isystem/usr/include"}, {"cuda", "--include-path=/x"},
  };
  for (const auto& [backend, bad] : attacks) {
    const auto refused = check(backend, {bad});
    ASSERT_FALSE(refused.ok()) << backend << " " << bad;
    EXPECT_EQ(refused.error().code, Errc::invalid_argument);
    EXPECT_NE(refused.error().message.find(std::string("'") + bad), std::string::npos)
        << refused.error().message;
  }
}

TEST(OptionRules, ValuesOfTheWrongShapeAreRefused) {
  for (const char* bad : {"--ftz=yes", "-std=c++99", "--maxrregcount=0", "--maxrregcount=256",
                          "--maxrregcount=1e3", "-DN-4", "-D1X", "--diag-error=abc", "-dopt=maybe",
                          "-G=1", "-lineinfo=true"}) {
    EXPECT_FALSE(check("cuda", {bad}).ok()) << bad;
  }
  EXPECT_FALSE(check("cuda", {"-DX=a\nb"}).ok()) << "a macro value spanning lines";
  EXPECT_FALSE(check("cuda", {"-D"}).ok()) << "a bare -D with nothing after it";
  for (const char* probe : {"-DX=__has_include(\"/etc/shadow\")", "-DX=_Pragma(\"GCC dependency \\\"/etc/shadow\\\"\")",
                            "-DX=__has_embed(\"/etc/shadow\")"}) {
    EXPECT_FALSE(check("hip", {probe}).ok()) << "a macro value that probes a file: " << probe;
    EXPECT_FALSE(check("cuda", {"-D", probe + 2}).ok()) << "the same as a separate value: " << probe;
  }
  EXPECT_FALSE(check("hip", {"-ffp-contract=everything"}).ok());
  EXPECT_FALSE(check("hip", {"-W"}).ok());
}

TEST(OptionRules, OneBackendsOptionsAreNotTheOthers) {
  EXPECT_FALSE(check("cuda", {"-O3"}).ok()) << "NVRTC has no -O3";
  EXPECT_FALSE(check("hip", {"-lineinfo"}).ok());
  EXPECT_FALSE(check("hip", {"--use_fast_math"}).ok());
  EXPECT_FALSE(check("opencl", {}).ok()) << "an unknown backend allows nothing, not even none";
}

TEST(OptionRules, AnOptionAfterABareMacroFlagIsStillChecked) {
  // `-D` consumes exactly one value: what follows is an option again.
  EXPECT_FALSE(check("cuda", {"-D", "N", "-time=/tmp/x"}).ok());
  EXPECT_FALSE(check("cuda", {"-D", "-time=/tmp/x"}).ok()) << "a value that is no macro";
}

}  // namespace
}  // namespace kcache

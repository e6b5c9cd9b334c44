// kcache-bench-nvrtc: the floor for a compile — NVRTC called directly in this process on the
// same sources kcache-bench-client compiles (docs/benchmarks.md). Prints one JSON object.
//
//   kcache-bench-nvrtc [--kind small|medium] [--count K] [--nonce X] [--warmup W] [--target T]
//                      [--out FILE]
//
// Module k is bench_source(kind, nonce + k), the first W untimed, compiled with the option kcached passes
// (--gpu-architecture=TARGET). `load_ms` is dlopen + symbol lookup; `ms` the compiles
// (create, compile, get cubin, destroy) with the library loaded. Exit 77 without NVRTC.
#include <dlfcn.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench_sources.hpp"
#include "compile/compiler.hpp"
#include "fanout.hpp"

namespace {

using nvrtcProgram = struct NvrtcProgramOpaque*;
using CreateFn = int (*)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
using CompileFn = int (*)(nvrtcProgram, int, const char* const*);
using SizeFn = int (*)(nvrtcProgram, std::size_t*);
using GetFn = int (*)(nvrtcProgram, char*);
using DestroyFn = int (*)(nvrtcProgram*);

struct DlClose {
  void operator()(void* h) const noexcept { ::dlclose(h); }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kcache-bench-nvrtc: in-process NVRTC, the floor for a compile"};
  std::string kind = "small", target = "sm_90a";
  int count = 10;
  int warmup = 1;
  std::uint64_t nonce = 1;
  app.add_option("--kind", kind)->check(CLI::IsMember({"small", "medium"}));
  app.add_option("--count", count)->check(CLI::Range(1, 100'000));
  app.add_option("--nonce", nonce);
  app.add_option("--warmup", warmup, "compiles done first and not timed (NVRTC's first-use set-up)");
  app.add_option("--target", target);
  std::string out_path;
  app.add_option("--out", out_path, "write the last cubin to this file");
  CLI11_PARSE(app, argc, argv);

  const std::int64_t t0 = kcache::bench::monotonic_ns();
  std::unique_ptr<void, DlClose> lib;
  for (const std::string& name : kcache::compiler_library_candidates("cuda")) {
    lib.reset(::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL));
    if (lib) break;
  }
  if (!lib) {
    std::fprintf(stderr, "kcache-bench-nvrtc: skipped: NVRTC not found\n");
    return 77;
  }
  auto sym = [&](const char* s) {
    void* p = ::dlsym(lib.get(), s);
    if (p == nullptr) {
      std::fprintf(stderr, "kcache-bench-nvrtc: %s missing\n", s);
      std::exit(1);
    }
    return p;
  };
  const auto create = reinterpret_cast<CreateFn>(sym("nvrtcCreateProgram"));
  const auto compile = reinterpret_cast<CompileFn>(sym("nvrtcCompileProgram"));
  const auto cubin_size = reinterpret_cast<SizeFn>(sym("nvrtcGetCUBINSize"));
  const auto get_cubin = reinterpret_cast<GetFn>(sym("nvrtcGetCUBIN"));
  const auto destroy = reinterpret_cast<DestroyFn>(sym("nvrtcDestroyProgram"));
  const double load_ms = static_cast<double>(kcache::bench::monotonic_ns() - t0) / 1e6;

  const std::string option = "--gpu-architecture=" + target;
  const char* options[] = {option.c_str()};
  std::vector<float> ms;
  std::size_t bytes = 0;
  for (int k = 0; k < warmup + count; ++k) {
    const std::string source = kcache::bench::bench_source(kind, nonce + static_cast<std::uint64_t>(k));
    const std::string name = kcache::bench::bench_module_name(kind, nonce + static_cast<std::uint64_t>(k));
    const std::int64_t c0 = kcache::bench::monotonic_ns();
    nvrtcProgram prog = nullptr;
    std::size_t size = 0;
    if (create(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) != 0 ||
        compile(prog, 1, options) != 0 || cubin_size(prog, &size) != 0 || size == 0) {
      std::fprintf(stderr, "kcache-bench-nvrtc: compile of %s failed\n", name.c_str());
      return 1;
    }
    std::string cubin(size, '\0');
    get_cubin(prog, cubin.data());
    destroy(&prog);
    if (!out_path.empty() && k + 1 == warmup + count) {
      std::FILE* f = std::fopen(out_path.c_str(), "wb");
      if (f == nullptr || std::fwrite(cubin.data(), 1, cubin.size(), f) != cubin.size() || std::fclose(f) != 0) {
        std::fprintf(stderr, "kcache-bench-nvrtc: cannot write %s\n", out_path.c_str());
        return 1;
      }
    }
    if (k >= warmup) ms.push_back(static_cast<float>(kcache::bench::monotonic_ns() - c0) / 1e6f);
    bytes = size;
  }
  nlohmann::json out = {{"bench", "nvrtc"}, {"kind", kind}, {"count", count},
                        {"load_ms", load_ms}, {"cubin_bytes", bytes}, {"ms", ms}};
  std::sort(ms.begin(), ms.end());
  out["median_ms"] = ms[ms.size() / 2];
  out["min_ms"] = ms.front();
  std::cout << out.dump() << "\n";
  return 0;
}

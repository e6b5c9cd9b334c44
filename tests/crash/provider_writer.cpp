#include "provider_writer.hpp"

#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "module_bytes.hpp"

namespace kcache::crash {

namespace {

namespace fs = std::filesystem;

// Whole-file write; "" on success. The harness owns these files: no fsync (a crash of the
// harness is not what is tested, only the daemon's).
std::string write_file(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wbx");
  if (f == nullptr) return "cannot create " + path + ": " + std::strerror(errno);
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  return ok && closed ? std::string() : "cannot write " + path;
}

std::string compress(const std::string& bytes, std::string& out) {
  out.resize(ZSTD_compressBound(bytes.size()));
  const std::size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3);
  if (ZSTD_isError(n)) return std::string("zstd: ") + ZSTD_getErrorName(n);
  out.resize(n);
  return {};
}

}  // namespace

std::string write_provider(const std::string& dir, const ProviderSpec& spec) {
  std::error_code ec;
  if (!fs::create_directory(dir, ec)) return "cannot create " + dir + ": " + ec.message();
  if (!fs::create_directory(dir + "/sm_90a", ec)) return "cannot create " + dir + "/sm_90a";
  nlohmann::json modules = nlohmann::json::array();
  for (const ProviderModule& m : spec.modules) {
    std::string file = "sm_90a/" + m.name + ".cubin";
    std::string stored = m.bytes;
    if (m.zstd) {
      file += ".zst";
      if (std::string error = compress(m.bytes, stored); !error.empty()) return error;
    }
    if (std::string error = write_file(dir + "/" + file, stored); !error.empty()) return error;
    modules.push_back({{"name", m.name},
                       {"file", file},
                       {"target", "sm_90a"},
                       {"size", m.bytes.size()},
                       {"digest", xxh128_hex(m.bytes)},
                       {"compression", m.zstd ? "zstd" : "none"}});
  }
  const nlohmann::json manifest{{"format", 1},
                                {"name", spec.name},
                                {"package", "crash-harness"},
                                {"version", kProviderVersion},
                                {"backend", "cuda-13.0"},
                                {"targets", {"sm_90a"}},
                                {"modules", std::move(modules)}};
  const std::string tmp = dir + "/.kcache-provider.json.tmp";
  if (std::string error = write_file(tmp, manifest.dump(2)); !error.empty()) return error;
  fs::rename(tmp, dir + "/kcache-provider.json", ec);
  return ec ? "cannot rename the manifest into " + dir + ": " + ec.message() : std::string();
}

}  // namespace kcache::crash

// Packing: inspect, compress, write modules, then the manifest last.
#include "pack.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>

#include "arch/binary_check.hpp"
#include "arch/elf_inspect.hpp"
#include "common/fd.hpp"
#include "providers/provider_verify.hpp"
#include "providers/zstd_ctx.hpp"

namespace kcache::pack {

namespace {

namespace fs = std::filesystem;
using providers::Compression;
using providers::Manifest;
using providers::ModuleSpec;

Result<std::string> read_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno_error(Errc::io, "cannot read '" + path + "'");
  return read_whole_file(fd.get());
}

Status write_file(const std::string& path, std::string_view bytes) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd) return errno_error(Errc::io, "cannot create '" + path + "'");
  KC_TRY(write_all(fd.get(), bytes.data(), bytes.size()));
  if (::fsync(fd.get()) != 0) return errno_error(Errc::io, "fsync '" + path + "'");
  return {};
}

Result<std::string> compress(providers::ZstdCCtx& cctx, std::string_view bytes, int level) {
  ZSTD_CCtx_reset(cctx.get(), ZSTD_reset_session_and_parameters);
  const std::size_t set = ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, level);
  if (ZSTD_isError(set)) return make_error(Errc::invalid_argument, std::string("--level: ") + ZSTD_getErrorName(set));
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  // One-shot compression records the content size in the frame header, which lets the daemon
  // refuse a frame promising more than the manifest declares before decoding it.
  const std::size_t n = ZSTD_compress2(cctx.get(), out.data(), out.size(), bytes.data(), bytes.size());
  if (ZSTD_isError(n)) return make_error(Errc::internal, std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

Status check_out_dir(const std::string& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) {
    fs::create_directories(out, ec);
    if (ec) return make_error(Errc::io, "cannot create '" + out + "': " + ec.message());
    return {};
  }
  if (!fs::is_directory(out, ec) || !fs::is_empty(out, ec))
    return make_error(Errc::invalid_argument, "--out '" + out + "' exists and is not an empty directory");
  return {};
}

// Directory names carry the target; AMD feature separators (':') become '_'.
std::string target_dir(const Target& t) {
  std::string s = t.str();
  for (char& c : s)
    if (c == ':') c = '_';
  return s;
}

}  // namespace

Result<Manifest> pack_provider(const PackOptions& o) {
  if (o.inputs.empty()) return make_error(Errc::invalid_argument, "no modules given (TARGET=FILE...)");
  Manifest m;
  m.name = o.name;
  m.package = o.package;
  m.version = o.version;
  m.backend = o.backend;
  providers::ZstdCCtx cctx;
  struct Pending {
    std::string path;
    std::string bytes;
  };
  std::vector<Pending> files;
  for (const Input& in : o.inputs) {
    auto target = parse_target(in.target);
    if (!target.ok()) return make_error(Errc::invalid_argument, "'" + in.target + "=" + in.file + "': " + target.error().message);
    KC_TRY_ASSIGN(std::string bytes, read_file(in.file));
    if (auto ok = check_binary_matches(std::as_bytes(std::span(bytes.data(), bytes.size())), *target); !ok.ok())
      return make_error(Errc::corrupt, "'" + in.file + "' refused: " + ok.error().message);
    const bool cuda = target->backend() == Backend::cuda;
    const std::string name = fs::path(in.file).stem().string();
    std::string rel = target_dir(*target) + "/" + name + (cuda ? ".cubin" : ".hsaco");
    ModuleSpec spec{name, rel, *target, bytes.size(), digest_of(std::string_view(bytes)),
                    o.compress ? Compression::zstd : Compression::none};
    if (o.compress) {
      spec.file += ".zst";
      KC_TRY_ASSIGN(bytes, compress(cctx, bytes, o.level));
    }
    bool listed = false;
    for (const Target& t : m.targets) listed |= t == *target;
    if (!listed) m.targets.push_back(*target);
    files.push_back({spec.file, std::move(bytes)});
    m.modules.push_back(std::move(spec));
  }
  if (!o.variant.empty()) {
    auto v = parse_variant(o.variant);
    if (!v.ok()) return make_error(Errc::invalid_argument, "--variant: " + v.error().message);
    m.variant = *v;
  }
  // The daemon's own parser has the last word on the manifest (names, backend, duplicates).
  const std::string text = providers::manifest_to_json(m);
  auto reparsed = providers::parse_manifest(nlohmann::json::parse(text));
  if (!reparsed.ok()) return reparsed.error();

  KC_TRY(check_out_dir(o.out));
  for (const Pending& f : files) {
    std::error_code ec;
    fs::create_directories(fs::path(o.out) / fs::path(f.path).parent_path(), ec);
    if (ec) return make_error(Errc::io, "cannot create a directory in '" + o.out + "': " + ec.message());
    KC_TRY(write_file(o.out + "/" + f.path, f.bytes));
  }
  const std::string manifest_path = o.out + "/" + std::string(providers::kManifestName);
  const std::string staging = o.out + "/.kcache-provider.json.tmp";
  KC_TRY(write_file(staging, text));
  if (::rename(staging.c_str(), manifest_path.c_str()) != 0)
    return errno_error(Errc::io, "rename '" + staging + "'");
  const providers::VerifyReport report = providers::verify_provider(o.out);
  if (!report.ok())
    return make_error(Errc::internal, "the provider written does not verify: " + report.provider.reason);
  return std::move(reparsed).value();
}

}  // namespace kcache::pack

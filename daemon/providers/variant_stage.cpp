// A kernels build variant into a staged store tree (variant_stage.hpp).
#include "providers/variant_stage.hpp"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "arch/compat.hpp"
#include "arch/host_object.hpp"
#include "providers/kernels_variant.hpp"
#include "providers/manifest.hpp"

namespace kcache::providers {

namespace {

using daemon::TreeFileSource;

// PTX of compute level X.Y JIT-compiles on P.Q >= X.Y; `a` only on X.Y, `f` only within X.
bool ptx_runs_on(const CudaTarget& ptx, const CudaCapability& dev) {
  if (ptx.suffix == CudaSuffix::arch) return dev == ptx.capability();
  if (ptx.suffix == CudaSuffix::family) return dev.major == ptx.major && dev.minor >= ptx.minor;
  return dev >= ptx.capability();
}

bool entry_runs_on(const HostCodeEntry& e, const Device& device) {
  if (!e.target) return false;
  if (e.kind == "ptx") {
    const CudaTarget* t = e.target->cuda();
    return t != nullptr && device.cuda() != nullptr && ptx_runs_on(*t, *device.cuda());
  }
  if (e.kind != "sass" && e.kind != "code-object") return false;
  return check_compatible(*e.target, device).compatible;
}

std::string entry_words(const HostCodeEntry& e) {
  if (!e.target) return e.kind;
  if (e.kind == "ptx" && e.target->cuda() != nullptr) return "compute_" + e.target->str().substr(3);
  return e.target->str();
}

}  // namespace

Status check_device_code(const std::string& path, std::string_view bytes, const Device& device) {
  const auto span = std::as_bytes(std::span(bytes.data(), bytes.size()));
  if (!is_host_object(span)) return {};
  auto info = inspect_host_object(span);
  if (!info.ok()) return make_error(Errc::corrupt, path + ": " + info.error().message);
  std::set<std::string> held;
  for (const HostCodeEntry& e : info->entries) {
    if (e.kind == "host") continue;
    if (entry_runs_on(e, device)) return {};
    held.insert(entry_words(e));
  }
  if (held.empty()) return {};  // no device code: a CPU library, a Python extension
  std::string list;
  for (const std::string& h : held) list += (list.empty() ? "" : ", ") + h;
  return make_error(Errc::corrupt, path + ": no device code for " + device.compile_target().str() +
                                       " (it holds " + list + ")");
}

namespace {

struct Expected {
  std::optional<KernelsDigest> digest;
  std::string metadata_text;
};

Result<Expected> read_metadata(const ProviderDir& repo, const std::string& rel) {
  KC_TRY_ASSIGN(OpenedFile file, repo.open_file(rel + "/" + std::string(kKernelsMetadataName)));
  if (static_cast<std::uint64_t>(file.st.st_size) > kMaxManifestBytes)
    return make_error(Errc::corrupt, "metadata.json is too large");
  Expected e;
  KC_TRY_ASSIGN(e.metadata_text, read_whole_file(file.fd.get()));
  const auto doc = nlohmann::json::parse(e.metadata_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return make_error(Errc::corrupt, "metadata.json is not valid JSON");
  KC_TRY_ASSIGN(KernelsMetadata meta, parse_kernels_metadata(doc));
  e.digest = std::move(meta.digest);
  return e;
}

// The files of the tree, each opened again and required to be the file listed.
Result<std::vector<TreeFileSource>> open_sources(const ProviderDir& repo, const std::string& rel,
                                                 const std::vector<VariantFile>& files) {
  std::vector<TreeFileSource> out;
  for (const std::string& extra : {std::string(kKernelsMetadataName), std::string(kKernelsMetadataName) + ".sigstore"}) {
    auto opened = repo.open_file(rel + "/" + extra);
    if (opened.ok()) out.push_back({extra, std::move(opened->fd)});
    else if (opened.error().code != Errc::not_found) return std::move(opened).error();
  }
  for (const VariantFile& f : files) {
    KC_TRY_ASSIGN(OpenedFile opened, repo.open_file(f.repo_relpath));
    if (file_identity(opened.st) != file_identity(f.st))
      return make_error(Errc::not_found, f.relpath + " changed while it was being served; rescanning");
    out.push_back({f.relpath, std::move(opened.fd)});
  }
  return out;
}

}  // namespace

Result<daemon::StagedObject> stage_variant(daemon::Store& store, const VariantJob& job) {
  KC_TRY_ASSIGN(const ProviderDir repo, ProviderDir::open(job.repo_dir));
  KC_TRY_ASSIGN(const Expected expected, read_metadata(repo, job.rel));
  KC_TRY_ASSIGN(const std::vector<VariantFile> files, list_variant_files(repo, job.rel));
  if (variant_identity(expected.metadata_text, files) != job.identity)
    return make_error(Errc::not_found, "build variant " + job.name + " changed since it was scanned; rescanning");
  if (expected.digest)
    for (const auto& listed : expected.digest->files) {
      const std::string& path = listed.first;
      if (std::none_of(files.begin(), files.end(), [&](const VariantFile& f) { return f.relpath == path; }))
        return make_error(Errc::corrupt, "build variant " + job.name + ": Missing file: " + path);
    }
  KC_TRY_ASSIGN(std::vector<TreeFileSource> sources, open_sources(repo, job.rel, files));
  const auto check = [&](const std::string& path, std::string_view bytes) -> Status {
    const std::string where = "build variant " + job.name + ": ";
    const bool metadata = path == kKernelsMetadataName || path == std::string(kKernelsMetadataName) + ".sigstore";
    if (expected.digest && !metadata) {
      const auto listed = expected.digest->files.find(path);
      if (listed == expected.digest->files.end()) return make_error(Errc::corrupt, where + "Unknown file: " + path);
      KC_TRY_ASSIGN(const std::string got, sha_base64_of_bytes(bytes, expected.digest->algorithm));
      if (got != listed->second)
        return make_error(Errc::corrupt, where + "File hash mismatch for " + path + ": expected: " +
                                             listed->second + ", got: " + got);
    }
    for (const Device& d : job.devices) {
      auto ok = check_device_code(path, bytes, d);
      if (!ok.ok()) return make_error(ok.error().code, where + ok.error().message);
    }
    return {};
  };
  return store.stage_tree({}, sources, check);
}

}  // namespace kcache::providers

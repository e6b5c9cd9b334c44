// A kernels build variant: metadata.json, the files kernels hashes, and the digest check.
#include "providers/kernels_variant.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <unordered_map>

#include "providers/manifest.hpp"

namespace kcache::providers {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxVariantFiles = 65536;
constexpr std::size_t kMaxRememberedHashes = 1u << 17;

Error bad(std::string message) {
  return make_error(Errc::invalid_argument, "metadata.json: " + std::move(message));
}

Result<std::string> optional_string(const json& doc, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return std::string();
  if (!it->is_string()) return bad("'" + std::string(key) + "' must be a string");
  return it->get<std::string>();
}

Result<KernelsDigest> parse_digest(const json& d) {
  if (!d.is_object()) return bad("'digest' must be an object");
  const auto algorithm = d.find("algorithm");
  if (algorithm == d.end() || !algorithm->is_string())
    return bad("'digest.algorithm' must be \"sha256\" or \"sha512\"");
  KernelsDigest out;
  const auto a = parse_sha_algorithm(algorithm->get<std::string>());
  if (!a) return bad("unsupported digest algorithm " + algorithm->dump() + " (sha256, sha512)");
  out.algorithm = *a;
  const auto files = d.find("files");
  if (files == d.end() || !files->is_object()) return bad("'digest.files' must be an object");
  for (const auto& [path, hash] : files->items()) {
    if (const std::string why = check_relative_path(path); !why.empty())
      return bad("digest path " + json(path).dump() + " " + why);
    if (!hash.is_string()) return bad("digest of " + json(path).dump() + " must be a string");
    out.files.emplace(path, hash.get<std::string>());
  }
  return out;
}

bool skipped(const fs::path& rel) {
  const std::string top = rel.string();
  if (top == "metadata.json" || top == "metadata.json.sigstore") return true;
  if (rel.extension() == ".pyc") return true;
  return std::any_of(rel.begin(), rel.end(), [](const fs::path& part) { return part == "__pycache__"; });
}

// Hashes remembered by (file identity, algorithm): blobs never change in place, and a file
// that does gets a new identity.
Result<std::string> hash_of(const ProviderDir& repo, const VariantFile& f, ShaAlgorithm a) {
  static std::mutex mutex;
  static std::unordered_map<Digest128, std::string, Digest128Hash> remembered;
  Hasher h;
  const Digest128 identity = file_identity(f.st);
  h.update(&identity, sizeof identity);
  h.update(sha_algorithm_name(a));
  const Digest128 key = h.finish();
  {
    const std::lock_guard lock(mutex);
    if (auto it = remembered.find(key); it != remembered.end()) return it->second;
  }
  KC_TRY_ASSIGN(OpenedFile opened, repo.open_file(f.repo_relpath));
  KC_TRY_ASSIGN(std::string hash, sha_base64_of_fd(opened.fd.get(), a));
  struct stat after {};
  if (::fstat(opened.fd.get(), &after) != 0 || file_identity(after) != identity)
    return make_error(Errc::not_found, "file " + f.relpath + " changed while being hashed");
  const std::lock_guard lock(mutex);
  if (remembered.size() >= kMaxRememberedHashes) remembered.clear();
  remembered.emplace(key, hash);
  return hash;
}

}  // namespace

Result<KernelsMetadata> parse_kernels_metadata(const json& doc) {
  if (!doc.is_object()) return bad("not a JSON object");
  KernelsMetadata out;
  KC_TRY_ASSIGN(out.name, optional_string(doc, "name"));
  KC_TRY_ASSIGN(out.id, optional_string(doc, "id"));
  if (const auto backend = doc.find("backend"); backend != doc.end() && !backend->is_null()) {
    if (!backend->is_object()) return bad("'backend' must be an object");
    KC_TRY_ASSIGN(out.backend_type, optional_string(*backend, "type"));
  }
  if (const auto digest = doc.find("digest"); digest != doc.end() && !digest->is_null()) {
    KC_TRY_ASSIGN(KernelsDigest d, parse_digest(*digest));
    out.digest = std::move(d);
  }
  return out;
}

Result<std::vector<VariantFile>> list_variant_files(const ProviderDir& repo,
                                                    const std::string& variant_rel) {
  const fs::path base = fs::path(repo.path()) / variant_rel;
  std::vector<VariantFile> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(base, fs::directory_options::none, ec), end;
  if (ec) return make_error(Errc::not_found, "cannot list " + base.string() + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return make_error(Errc::io, "cannot list " + base.string() + ": " + ec.message());
    const fs::path rel = it->path().lexically_relative(base);
    std::error_code type_ec;
    if (it->is_directory(type_ec) || skipped(rel)) continue;  // a linked directory: not walked
    if (out.size() == kMaxVariantFiles)
      return make_error(Errc::corrupt, "more than " + std::to_string(kMaxVariantFiles) + " files");
    VariantFile f;
    f.relpath = rel.generic_string();
    f.repo_relpath = (fs::path(variant_rel) / rel).generic_string();
    auto opened = repo.open_file(f.repo_relpath);
    if (!opened.ok()) return make_error(opened.error().code, "file " + f.relpath + ": " + opened.error().message);
    f.st = opened->st;
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(),
            [](const VariantFile& a, const VariantFile& b) { return a.relpath < b.relpath; });
  return out;
}

void hash_variant_files(Hasher& h, const std::vector<VariantFile>& files) {
  for (const VariantFile& f : files) {
    h.update(f.relpath);
    const Digest128 id = file_identity(f.st);
    h.update(&id, sizeof id);
  }
}

Digest128 variant_identity(std::string_view metadata_text, const std::vector<VariantFile>& files) {
  Hasher h;
  h.update(metadata_text);
  hash_variant_files(h, files);
  return h.finish();
}

Result<std::vector<std::string>> check_variant_digest(const ProviderDir& repo,
                                                      const std::vector<VariantFile>& files,
                                                      const KernelsDigest& digest) {
  std::vector<std::string> violations;
  std::map<std::string, const VariantFile*> actual;
  for (const VariantFile& f : files) actual.emplace(f.relpath, &f);
  for (const auto& [path, expected] : digest.files) {
    const auto found = actual.find(path);
    if (found == actual.end()) {
      violations.push_back("Missing file: " + path);
      continue;
    }
    KC_TRY_ASSIGN(const std::string got, hash_of(repo, *found->second, digest.algorithm));
    if (got != expected)
      violations.push_back("File hash mismatch for " + path + ": expected: " + expected +
                           ", got: " + got);
  }
  for (const auto& [path, file] : actual)
    if (!digest.files.contains(path)) violations.push_back("Unknown file: " + path);
  return violations;
}

}  // namespace kcache::providers

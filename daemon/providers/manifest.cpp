// The manifest grammar of manifest.hpp, checked field by field with one reason per failure.
#include "providers/manifest.hpp"

#include <nlohmann/json.hpp>

#include <set>
#include <utility>

namespace kcache::providers {

namespace {

using nlohmann::json;

Error bad(const std::string& what) { return make_error(Errc::invalid_argument, what); }

bool has_control_char(std::string_view s) {
  for (const char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  return false;
}

// A required string field: present, a string, 1..max bytes, no control characters.
Result<std::string> text_field(const json& obj, const char* key, std::size_t max,
                               const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end()) return bad(where + "'" + key + "' is missing");
  if (!it->is_string()) return bad(where + "'" + key + "' must be a string");
  std::string s = it->get<std::string>();
  if (s.empty()) return bad(where + "'" + key + "' is empty");
  if (s.size() > max)
    return bad(where + "'" + key + "' is longer than " + std::to_string(max) + " bytes");
  if (has_control_char(s)) return bad(where + "'" + key + "' contains a control character");
  return s;
}

Status only_keys(const json& obj, std::initializer_list<std::string_view> allowed,
                 const std::string& where) {
  for (const auto& [key, value] : obj.items()) {
    bool known = false;
    for (std::string_view a : allowed) known |= key == a;
    if (!known) return bad(where + "unknown key '" + key + "'");
  }
  return {};
}

// "cuda-13.0" → cuda, "rocm-6.3" → hip: a name and a dotted major.minor.
Result<Backend> parse_backend(std::string_view text) {
  const std::size_t dash = text.find('-');
  const std::string_view family = text.substr(0, dash);
  const std::string_view version = dash == std::string_view::npos ? "" : text.substr(dash + 1);
  const std::size_t dot = version.find('.');
  const auto digits = [](std::string_view s) {
    if (s.empty() || s.size() > 4) return false;
    for (char c : s)
      if (c < '0' || c > '9') return false;
    return true;
  };
  if (dot == std::string_view::npos || !digits(version.substr(0, dot)) ||
      !digits(version.substr(dot + 1)) || (family != "cuda" && family != "rocm"))
    return bad("'backend' must be cuda-X.Y or rocm-X.Y, not '" + std::string(text) + "'");
  return family == "cuda" ? Backend::cuda : Backend::hip;
}

Result<Target> target_of(const json& value, Backend backend, const std::string& where) {
  if (!value.is_string()) return bad(where + "target must be a string");
  const std::string text = value.get<std::string>();
  auto t = parse_target(text);
  if (!t.ok()) return bad(where + "target '" + text + "': " + t.error().message);
  if (t->backend() != backend)
    return bad(where + "target " + t->str() + " does not belong to the provider's backend");
  return std::move(t).value();
}

Result<ModuleSpec> parse_module(const json& m, std::size_t index, const Manifest& p) {
  std::string where = "modules[" + std::to_string(index) + "]: ";
  if (!m.is_object()) return bad(where + "must be an object");
  KC_TRY(only_keys(m, {"name", "file", "target", "size", "digest", "compression"}, where));
  KC_TRY_ASSIGN(std::string name, text_field(m, "name", 1024, where));
  where = "modules[" + std::to_string(index) + "] ('" + name + "'): ";
  KC_TRY_ASSIGN(std::string file, text_field(m, "file", 4096, where));
  if (const std::string why = check_relative_path(file); !why.empty())
    return bad(where + "file '" + file + "' " + why);
  if (!m.contains("target")) return bad(where + "'target' is missing");
  KC_TRY_ASSIGN(Target target, target_of(m["target"], p.backend_kind, where));
  bool declared = false;
  for (const Target& t : p.targets) declared |= t == target;
  if (!declared) return bad(where + "target " + target.str() + " is not in the provider's 'targets'");
  const auto size = m.find("size");
  if (size == m.end()) return bad(where + "'size' is missing");
  // Parsed JSON holds non-negative integers as unsigned, built JSON may hold them as signed.
  const bool positive = size->is_number_unsigned() ||
                        (size->is_number_integer() && size->get<std::int64_t>() > 0);
  if (!positive || size->get<std::uint64_t>() == 0 || size->get<std::uint64_t>() > kMaxModuleSize)
    return bad(where + "'size' must be an integer from 1 to " + std::to_string(kMaxModuleSize));
  KC_TRY_ASSIGN(const std::string digest_text, text_field(m, "digest", 32, where));
  auto digest = parse_digest_hex(digest_text);
  if (!digest.ok() || digest->hex() != digest_text)
    return bad(where + "'digest' must be 32 lowercase hex digits (xxhsum -H2), not '" +
               digest_text + "'");
  KC_TRY_ASSIGN(const std::string compression, text_field(m, "compression", 16, where));
  if (compression != "none" && compression != "zstd")
    return bad(where + "'compression' must be \"none\" or \"zstd\", not '" + compression + "'");
  return ModuleSpec{std::move(name),
                    std::move(file),
                    std::move(target),
                    size->get<std::uint64_t>(),
                    *digest,
                    compression == "zstd" ? Compression::zstd : Compression::none};
}

}  // namespace

std::string_view compression_name(Compression c) noexcept {
  return c == Compression::zstd ? "zstd" : "none";
}

std::string check_relative_path(std::string_view path) {
  if (path.empty()) return "is empty";
  if (path.front() == '/') return "is an absolute path";
  if (path.find('\0') != std::string_view::npos) return "contains a NUL byte";
  if (path.find('\\') != std::string_view::npos) return "contains a backslash";
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part == "..") return "leaves the provider directory ('..')";
    if (part.empty() || part == ".") return "is not a plain relative path (empty or '.' part)";
    start = end + 1;
  }
  return {};
}

Result<Manifest> parse_manifest(const json& doc) {
  if (!doc.is_object()) return bad("the manifest is not a JSON object");
  // format first: a newer manifest is reported as newer, not as a pile of unknown keys.
  const auto format = doc.find("format");
  if (format == doc.end()) return bad("'format' is missing");
  if (!format->is_number_integer()) return bad("'format' must be an integer");
  if (format->get<std::int64_t>() != kManifestFormat)
    return bad("unsupported manifest format " + format->dump() + " (this kcached reads format " +
               std::to_string(kManifestFormat) + ")");
  KC_TRY(only_keys(
      doc, {"format", "name", "package", "version", "backend", "variant", "targets", "modules"},
      ""));
  Manifest p;
  KC_TRY_ASSIGN(p.name, text_field(doc, "name", 256, ""));
  KC_TRY_ASSIGN(p.package, text_field(doc, "package", 256, ""));
  KC_TRY_ASSIGN(p.version, text_field(doc, "version", 128, ""));
  for (const char c : p.version)
    if (c == ' ') return bad("'version' contains a space");
  KC_TRY_ASSIGN(p.backend, text_field(doc, "backend", 32, ""));
  KC_TRY_ASSIGN(p.backend_kind, parse_backend(p.backend));
  if (doc.contains("variant")) {
    KC_TRY_ASSIGN(const std::string text, text_field(doc, "variant", 256, ""));
    auto v = parse_variant(text);
    if (!v.ok()) return bad("'variant': " + v.error().message);
    p.variant = std::move(v).value();
  }
  const auto targets = doc.find("targets");
  if (targets == doc.end() || !targets->is_array() || targets->empty())
    return bad("'targets' must be a non-empty array of targets");
  for (std::size_t i = 0; i < targets->size(); ++i) {
    KC_TRY_ASSIGN(Target t, target_of((*targets)[i], p.backend_kind,
                                      "targets[" + std::to_string(i) + "]: "));
    for (const Target& seen : p.targets)
      if (seen == t) return bad("targets[" + std::to_string(i) + "]: " + t.str() + " is listed twice");
    p.targets.push_back(std::move(t));
  }
  const auto modules = doc.find("modules");
  if (modules == doc.end() || !modules->is_array() || modules->empty())
    return bad("'modules' must be a non-empty array");
  if (modules->size() > kMaxModules)
    return bad("more than " + std::to_string(kMaxModules) + " modules");
  std::set<std::pair<std::string, std::string>> seen;
  for (std::size_t i = 0; i < modules->size(); ++i) {
    KC_TRY_ASSIGN(ModuleSpec m, parse_module((*modules)[i], i, p));
    if (!seen.emplace(m.name, m.target.str()).second)
      return bad("modules[" + std::to_string(i) + "] ('" + m.name + "'): a second module for " +
                 m.target.str());
    p.modules.push_back(std::move(m));
  }
  return p;
}

std::string manifest_to_json(const Manifest& p) {
  nlohmann::ordered_json doc;
  doc["format"] = p.format;
  doc["name"] = p.name;
  doc["package"] = p.package;
  doc["version"] = p.version;
  doc["backend"] = p.backend;
  if (p.variant) doc["variant"] = p.variant->str();
  doc["targets"] = nlohmann::ordered_json::array();
  for (const Target& t : p.targets) doc["targets"].push_back(t.str());
  doc["modules"] = nlohmann::ordered_json::array();
  for (const ModuleSpec& m : p.modules)
    doc["modules"].push_back({{"name", m.name},
                              {"file", m.file},
                              {"target", m.target.str()},
                              {"size", m.size},
                              {"digest", m.digest.hex()},
                              {"compression", compression_name(m.compression)}});
  return doc.dump(2) + "\n";
}

}  // namespace kcache::providers

#include "providers/system_json.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace kcache::providers {

Result<SystemInfo> parse_system_json(std::string_view text) {
  const auto bad = [](const std::string& why) {
    return make_error(Errc::invalid_argument, "system: " + why);
  };
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return bad("not valid JSON");
  if (!doc.is_object()) return bad("must be a JSON object");
  std::string spec;
  for (const auto& [key, value] : doc.items()) {
    if (!value.is_string()) return bad("'" + key + "' must be a string");
    const std::string v = value.get<std::string>();
    // The spec form separates with ',' and '=': neither may hide inside a key or value.
    if (key.find_first_of(",=") != std::string::npos || v.find_first_of(",=") != std::string::npos)
      return bad("'" + key + "' contains ',' or '='");
    if (!spec.empty()) spec += ',';
    spec += key + "=" + v;
  }
  auto sys = parse_system_spec(spec);
  if (!sys.ok()) return bad(sys.error().message);
  return std::move(sys).value();
}

}  // namespace kcache::providers

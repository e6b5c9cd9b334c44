#include "handlers/request_fields.hpp"

#include "common/text.hpp"

namespace kcache::daemon {

const nlohmann::json* RequestFields::find(std::string_view field) const {
  if (!doc_.is_object()) return nullptr;
  const auto it = doc_.find(field);
  if (it == doc_.end() || it->is_null()) return nullptr;
  return &*it;
}

Error RequestFields::wrong(std::string_view field, std::string_view expected) const {
  const nlohmann::json* value = find(field);
  return make_error(Errc::invalid_argument, std::string(op_) + ": '" + std::string(field) +
                                                "' must be " + std::string(expected) + ", not " +
                                                (value ? value->type_name() : "null"));
}

Status RequestFields::only(std::initializer_list<std::string_view> known) const {
  if (!doc_.is_object()) return {};
  for (const auto& [key, value] : doc_.items()) {
    bool is_known = false;
    for (std::string_view k : known) is_known |= key == k;
    if (is_known) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return make_error(Errc::invalid_argument,
                      std::string(op_) + ": unknown field '" + printable(key) + "' (" +
                          (list.empty() ? "it takes none" : "it takes " + list) + ")");
  }
  return {};
}

Result<std::string> RequestFields::text(std::string_view field, std::string fallback) const {
  const nlohmann::json* value = find(field);
  if (value == nullptr) return fallback;
  if (!value->is_string()) return wrong(field, "a string");
  return value->get<std::string>();
}

Result<std::optional<std::uint64_t>> RequestFields::optional_count(std::string_view field,
                                                                   std::uint64_t max) const {
  const nlohmann::json* value = find(field);
  if (value == nullptr) return std::optional<std::uint64_t>();
  // Parsed JSON holds a non-negative integer as unsigned; a negative one or a float is wrong.
  if (!value->is_number_unsigned()) return wrong(field, "a non-negative integer");
  const auto n = value->get<std::uint64_t>();
  if (n > max)
    return make_error(Errc::invalid_argument, std::string(op_) + ": '" + std::string(field) + "' is " +
                                                  std::to_string(n) + ", over the limit of " +
                                                  std::to_string(max));
  return std::optional<std::uint64_t>(n);
}

Result<std::uint64_t> RequestFields::count(std::string_view field, std::uint64_t fallback,
                                           std::uint64_t max) const {
  KC_TRY_ASSIGN(const std::optional<std::uint64_t> n, optional_count(field, max));
  return n.value_or(fallback);
}

Result<bool> RequestFields::flag(std::string_view field, bool fallback) const {
  const nlohmann::json* value = find(field);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) return wrong(field, "true or false");
  return value->get<bool>();
}

}  // namespace kcache::daemon

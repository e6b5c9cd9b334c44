// request_fields.hpp — the one reader of a control request's JSON fields (docs/protocol.md).
//
// Contract: a getter returns the field's value, or `fallback` when the field is absent or
// null; a value of another type or out of range is Errc::invalid_argument naming the
// operation and the field ("list: 'limit' must be a non-negative integer, not a string").
// `only(known)` refuses a field the operation does not know, so a typo is an error, not a
// silently ignored option. Nothing here throws.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "kcache/result.hpp"

namespace kcache::daemon {

class RequestFields {
 public:
  RequestFields(std::string_view operation, const nlohmann::json& doc) : op_(operation), doc_(doc) {}

  Status only(std::initializer_list<std::string_view> known) const;
  Result<std::string> text(std::string_view field, std::string fallback = {}) const;
  Result<std::uint64_t> count(std::string_view field, std::uint64_t fallback = 0,
                              std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const;
  // Absent or null: nullopt (for settings whose default is decided elsewhere).
  Result<std::optional<std::uint64_t>> optional_count(
      std::string_view field, std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const;
  Result<bool> flag(std::string_view field, bool fallback = false) const;

 private:
  const nlohmann::json* find(std::string_view field) const;
  Error wrong(std::string_view field, std::string_view expected) const;

  std::string_view op_;
  const nlohmann::json& doc_;
};

}  // namespace kcache::daemon

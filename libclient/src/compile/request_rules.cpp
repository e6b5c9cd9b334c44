#include "compile/request_rules.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>

#include "common/text.hpp"

namespace kcache {

namespace {
Error too_large(const std::string& what, std::size_t value, std::size_t limit) {
  return make_error(Errc::too_large, what + " is " + std::to_string(value) + ", over the limit of " +
                                         std::to_string(limit));
}

}  // namespace

Status check_request_limits(const wire::GetRequest& r, const RequestLimits& l) {
  if (r.name.empty()) return make_error(Errc::invalid_argument, "module name is empty");
  if (r.name.size() > l.max_name) return too_large("module name length", r.name.size(), l.max_name);
  if (r.name.find('\0') != std::string::npos)
    return make_error(Errc::invalid_argument, "module name contains a NUL byte");
  KC_TRY(check_label("module name", r.name));
  if (r.version.size() > l.max_name)
    return too_large("module version length", r.version.size(), l.max_name);
  KC_TRY(check_label("module version", r.version));
  if (r.source && r.source->size() > l.max_source)
    return too_large("source size (limits.max_source)", r.source->size(), l.max_source);
  if (r.headers.size() > l.max_headers)
    return too_large("header count (limits.max_headers)", r.headers.size(), l.max_headers);
  std::size_t header_bytes = 0;
  std::set<std::string_view> names;
  for (const auto& h : r.headers) {
    if (h.name.empty()) return make_error(Errc::invalid_argument, "a header has an empty name");
    KC_TRY(check_label("header name", h.name));
    if (!names.insert(h.name).second)
      return make_error(Errc::invalid_argument, "header '" + h.name + "' is given twice");
    header_bytes += h.name.size() + h.data.size();
  }
  if (header_bytes > l.max_header_bytes)
    return too_large("total header bytes (limits.max_header_bytes)", header_bytes, l.max_header_bytes);
  if (r.options.size() > l.max_options)
    return too_large("option count (limits.max_options)", r.options.size(), l.max_options);
  for (const auto& o : r.options)
    if (o.size() > l.max_option_length)
      return too_large("option length (limits.max_option_length)", o.size(), l.max_option_length);
  return {};
}

}  // namespace kcache

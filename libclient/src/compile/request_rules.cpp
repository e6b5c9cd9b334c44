#include "compile/request_rules.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>

namespace kcache {

namespace {
Error too_large(const std::string& what, std::size_t value, std::size_t limit) {
  return make_error(Errc::too_large, what + " is " + std::to_string(value) + ", over the limit of " +
                                         std::to_string(limit));
}

// Options a request may not pass: the target comes from the request, every output file is
// kcached's, and headers come only from the request. `glued`: the value may follow directly
// (`-I/usr/include`); otherwise only `name` or `name=value` is matched.
struct RefusedOption {
  std::string_view name;
  bool glued;
};
constexpr RefusedOption kRefused[] = {
    {"-arch", true},          {"--gpu-architecture", false}, {"--offload-arch", false},
    {"-offload-arch", false}, {"--output", false},           {"--output-dir", false},
    {"-save-temps", false},   {"--save-temps", false},       {"-keep", false},
    {"--keep", false},        {"--keep-dir", false},         {"-I", true},
    {"--include-path", false}, {"-isystem", true},           {"-MF", true},
    {"-MD", false},           {"-MMD", false},               {"--pch-dir", false},
};

bool refused(std::string_view option) {
  // `-o FILE`, `-o=FILE`, `-o/path`: but not other options that merely start with "-o".
  if (option == "-o" || option.starts_with("-o=") || option.starts_with("-o/") ||
      option.starts_with("-o.") || option.starts_with("-o~"))
    return true;
  for (const RefusedOption& r : kRefused) {
    if (option == r.name) return true;
    if (option.size() > r.name.size() && option.starts_with(r.name) &&
        (r.glued || option[r.name.size()] == '='))
      return true;
  }
  return false;
}
}  // namespace

Status check_request_limits(const wire::GetRequest& r, const RequestLimits& l) {
  if (r.name.empty()) return make_error(Errc::invalid_argument, "module name is empty");
  if (r.name.size() > l.max_name) return too_large("module name length", r.name.size(), l.max_name);
  if (r.name.find('\0') != std::string::npos)
    return make_error(Errc::invalid_argument, "module name contains a NUL byte");
  if (r.source && r.source->size() > l.max_source)
    return too_large("source size (limits.max_source)", r.source->size(), l.max_source);
  if (r.headers.size() > l.max_headers)
    return too_large("header count (limits.max_headers)", r.headers.size(), l.max_headers);
  std::size_t header_bytes = 0;
  std::set<std::string_view> names;
  for (const auto& h : r.headers) {
    if (h.name.empty()) return make_error(Errc::invalid_argument, "a header has an empty name");
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

namespace {

// The directory an include option names: `-I/x`, `-isystem/x`, `--include-path=/x`, or the
// next option after a bare `-I`, `-isystem`, `--include-path`. `*consumed` says whether the
// next option was the value. Nullopt: `option` does not name an include directory.
std::optional<std::string_view> include_dir(std::span<const std::string> options, std::size_t i,
                                            bool* consumed) {
  const std::string_view o = options[i];
  *consumed = false;
  for (const std::string_view flag : {"-isystem", "-I", "--include-path"}) {
    if (o == flag) {
      *consumed = true;
      return i + 1 < options.size() ? std::string_view(options[i + 1]) : std::string_view();
    }
    if (!o.starts_with(flag)) continue;
    std::string_view rest = o.substr(flag.size());
    if (flag == "--include-path") {
      if (!rest.starts_with('=')) return std::nullopt;
      rest.remove_prefix(1);
    }
    return rest;
  }
  return std::nullopt;
}

}  // namespace

Status check_compile_options(std::span<const std::string> options,
                             const IncludeDirCheck& allow_include) {
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string& o = options[i];
    bool consumed = false;
    if (const auto dir = include_dir(options, i, &consumed); dir && allow_include) {
      if (!dir->empty() && allow_include(*dir)) {
        if (consumed) ++i;
        continue;
      }
      return make_error(Errc::invalid_argument,
                        "option '" + o + (consumed && i + 1 < options.size() ? " " + options[i + 1] : "") +
                            "' is not allowed: headers come from the request or from an include "
                            "root kcached allows (include_roots), and this directory is in none");
    }
    if (refused(o))
      return make_error(Errc::invalid_argument,
                        "option '" + o + "' is not allowed: the target comes from the request, "
                        "headers only from the request, and kcached owns every output file");
  }
  return {};
}

}  // namespace kcache

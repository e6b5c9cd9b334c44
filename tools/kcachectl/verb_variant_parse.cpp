// kcachectl variant parse — what kcache reads in build variant names (docs/kcachectl.md).
//
// Runs locally over libclient/src/variant (no daemon). One line or JSON object per name, in
// the order given; exit 1 when any name is invalid.
#include <iostream>

#include "output.hpp"
#include "variant/variant.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

struct ParseArgs {
  std::vector<std::string> names;
} args;

std::string_view kind_name(kcache::VariantKind kind) {
  switch (kind) {
    case kcache::VariantKind::torch:
    case kcache::VariantKind::stable_abi:
    case kcache::VariantKind::tvm_ffi:
      return "arch";
    case kcache::VariantKind::noarch:
      return "noarch";
    case kcache::VariantKind::universal:
      break;
  }
  return "universal";
}

// The framework an arch build was compiled against; noarch and universal have none.
std::string_view framework_name(kcache::VariantKind kind) {
  switch (kind) {
    case kcache::VariantKind::torch:
      return "torch";
    case kcache::VariantKind::stable_abi:
      return "torch-stable-abi";
    case kcache::VariantKind::tvm_ffi:
      return "tvm-ffi";
    case kcache::VariantKind::noarch:
    case kcache::VariantKind::universal:
      break;
  }
  return {};
}

Json to_json(std::string_view input, const kcache::Variant& v) {
  const auto or_null = [](std::string_view s) { return s.empty() ? Json() : Json(s); };
  const bool arch = v.is_arch();
  const bool has_backend = v.kind != kcache::VariantKind::universal;
  return Json{
      {"input", input},
      {"valid", true},
      {"kind", kind_name(v.kind)},
      {"framework", or_null(framework_name(v.kind))},
      {"framework_version", arch ? Json(v.framework_version.str()) : Json()},
      {"cxx_abi", or_null(kcache::cxx_abi_name(v.cxx))},
      {"backend", has_backend ? Json(kcache::variant_backend_name(v.backend)) : Json()},
      {"backend_version", v.backend_version ? Json(v.backend_version->str()) : Json()},
      {"python_abi", arch ? Json(kcache::python_abi_name(v.python_abi)) : Json()},
      {"cpu", arch ? Json(v.cpu) : Json()},
      {"os", arch ? Json(v.os) : Json()},
      {"canonical", v.str()},
  };
}

// "arch: torch 2.10, cxx11, cuda 12.8, abi3, x86_64, linux" — the fields in name order.
std::string details(const kcache::Variant& v) {
  std::string out(kind_name(v.kind));
  if (v.kind == kcache::VariantKind::universal) return out;
  out += ": ";
  if (v.is_arch()) {
    out += std::string(framework_name(v.kind)) + " " + v.framework_version.str() + ", ";
    if (v.cxx != kcache::CxxAbi::none) out += std::string(kcache::cxx_abi_name(v.cxx)) + ", ";
  }
  out += kcache::variant_backend_name(v.backend);
  if (v.backend_version) out += " " + v.backend_version->str();
  if (v.is_arch())
    out += ", " + std::string(kcache::python_abi_name(v.python_abi)) + ", " + v.cpu + ", " + v.os;
  return out;
}

// The parser's messages start "invalid build variant '<name>': "; the line already starts
// with the name, so only the reason follows it.
std::string reason_only(const std::string& input, const std::string& message) {
  const std::string prefix = "invalid build variant '" + input + "': ";
  return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
}

}  // namespace

void setup_variant_parse(Options& o) {
  o.add_positionals("NAME", args.names,
                    "Build variant names, e.g. torch210-cxx11-cu128-x86_64-linux");
}

int run_variant_parse(const Context& ctx) {
  bool all_valid = true;
  Json out = Json::array();
  for (const std::string& name : args.names) {
    auto v = kcache::parse_variant(name);
    all_valid &= v.ok();
    if (ctx.json) {
      out.push_back(v.ok() ? to_json(name, *v)
                           : Json{{"input", name}, {"valid", false}, {"error", v.error().message}});
    } else if (v.ok()) {
      std::cout << name << ": " << v->str() << " (" << details(*v) << ")\n";
    } else {
      std::cout << name << ": invalid: " << reason_only(name, v.error().message) << '\n';
    }
  }
  if (ctx.json) print_json(out);
  return all_valid ? kExitOk : kExitFailure;
}

}  // namespace kcachectl

// variant/system.cpp — the `key=value,…` system description.
#include "variant/system.hpp"

#include <set>

#include "arch/text_util.hpp"

namespace kcache {
namespace {

Error bad_spec(std::string_view spec, const std::string& why) {
  return make_error(Errc::invalid_argument,
                    "invalid system description '" + std::string(spec) + "': " + why);
}

}  // namespace

std::string SystemInfo::str() const {
  std::string out = "cpu=" + cpu + ",os=" + os;
  if (torch) out += ",torch=" + torch->str();
  if (torch_cxx != CxxAbi::none) out += ",cxx=" + std::string(cxx_abi_name(torch_cxx));
  out += ",backend=" + std::string(variant_backend_name(backend));
  if (backend_version) out += "-" + backend_version->str();
  out += free_threaded ? ",python=free-threaded" : ",python=gil";
  if (tvm_ffi) out += ",tvm-ffi=" + tvm_ffi->str();
  if (macos) out += ",macos=" + macos->str();
  return out;
}

Result<BackendSpec> parse_backend_spec(std::string_view text) {
  const auto dash = text.find('-');
  const auto backend = parse_variant_backend(text.substr(0, dash));
  if (!backend)
    return make_error(Errc::invalid_argument,
                      "'" + std::string(text) +
                          "' is not a backend (cuda, rocm, xpu, cann with a version as in "
                          "cuda-12.8; cpu, metal, neuron, tpu without)");
  BackendSpec out{*backend, std::nullopt};
  if (dash != std::string_view::npos) {
    out.version = parse_version_mm(text.substr(dash + 1));
    if (!out.version)
      return make_error(Errc::invalid_argument,
                        "backend '" + std::string(text) + "' has a bad version (expected X.Y)");
  }
  if (backend_is_versioned(*backend) && !out.version)
    return make_error(Errc::invalid_argument,
                      "backend '" + std::string(text) + "' needs a version, as in cuda-12.8");
  if (!backend_is_versioned(*backend) && out.version)
    return make_error(Errc::invalid_argument,
                      "backend '" + std::string(text) + "' takes no version");
  return out;
}

Result<SystemInfo> parse_system_spec(std::string_view spec) {
  SystemInfo sys;
  std::set<std::string_view> seen;
  for (std::string_view item : split(spec, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      return bad_spec(spec, "'" + std::string(item) + "' is not key=value");
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    if (!seen.insert(key).second)
      return bad_spec(spec, "key '" + std::string(key) + "' given twice");
    const auto bad_value = [&] {
      return bad_spec(spec, "bad value '" + std::string(value) + "' for " + std::string(key));
    };
    if (key == "cpu" || key == "os") {
      if (value.empty()) return bad_value();
      (key == "cpu" ? sys.cpu : sys.os) = std::string(value);
    } else if (key == "torch" || key == "tvm-ffi" || key == "macos") {
      auto v = parse_version_mm(value);
      if (!v) return bad_value();
      (key == "torch" ? sys.torch : key == "tvm-ffi" ? sys.tvm_ffi : sys.macos) = v;
    } else if (key == "cxx") {
      if (value == "cxx11")
        sys.torch_cxx = CxxAbi::cxx11;
      else if (value == "cxx98")
        sys.torch_cxx = CxxAbi::cxx98;
      else
        return bad_value();
    } else if (key == "python") {
      if (value == "gil" || value == "abi3")
        sys.free_threaded = false;
      else if (value == "free-threaded" || value == "abi3t")
        sys.free_threaded = true;
      else
        return bad_value();
    } else if (key == "backend") {
      auto backend = parse_backend_spec(value);
      if (!backend.ok()) return bad_spec(spec, backend.error().message);
      sys.backend = backend->backend;
      sys.backend_version = backend->version;
    } else {
      return bad_spec(spec, "unknown key '" + std::string(key) + "'");
    }
  }
  for (std::string_view required : {"cpu", "os", "backend"})
    if (!seen.contains(required)) return bad_spec(spec, "missing " + std::string(required) + "=");
  return sys;
}

}  // namespace kcache

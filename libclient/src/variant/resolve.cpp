// variant/resolve.cpp — acceptance rules, preference order and the resolution trace.
#include "variant/resolve.hpp"

#include <algorithm>
#include <tuple>

namespace kcache {
namespace {

std::string or_none(const std::optional<VersionMM>& v) {
  return v ? v->str() : "none";
}

std::string cxx_or_none(CxxAbi abi) {
  return abi == CxxAbi::none ? "none" : std::string(cxx_abi_name(abi));
}

std::string python_rule(const Variant& v, const SystemInfo& sys) {
  if (sys.free_threaded && v.python_abi != PythonAbi::abi3t)
    return "Python ABI (" + std::string(python_abi_name(v.python_abi)) +
           ") is not compatible with system Python ABI (abi3t, free-threaded)";
  return {};
}

std::string framework_rule(const Variant& v, const SystemInfo& sys) {
  const std::string version = v.framework_version.str();
  switch (v.kind) {
    case VariantKind::torch:
      if (!sys.torch || *sys.torch != v.framework_version)
        return "Torch version (" + version + ") does not match system Torch version (" +
               or_none(sys.torch) + ")";
      if (v.cxx != CxxAbi::none && v.cxx != sys.torch_cxx)
        return "C++ ABI (" + cxx_or_none(v.cxx) + ") does not match system C++ ABI (" +
               cxx_or_none(sys.torch_cxx) + ")";
      return {};
    case VariantKind::stable_abi:
      if (!sys.torch || *sys.torch < v.framework_version)
        return "Torch stable ABI version (" + version + ") is newer than system Torch version (" +
               or_none(sys.torch) + ")";
      return {};
    case VariantKind::tvm_ffi:
      if (!sys.tvm_ffi || *sys.tvm_ffi != v.framework_version)
        return "tvm-ffi version (" + version + ") does not match system tvm-ffi version (" +
               or_none(sys.tvm_ffi) + ")";
      return {};
    case VariantKind::noarch:
    case VariantKind::universal:
      break;
  }
  return {};
}

std::string backend_rule(const Variant& v, const SystemInfo& sys) {
  if (v.backend != sys.backend)
    return "Backend (" + std::string(variant_backend_name(v.backend)) +
           ") does not match system backend (" + std::string(variant_backend_name(sys.backend)) +
           ")";
  const std::string name(variant_backend_display(v.backend));
  if (v.backend == VariantBackend::cuda) {
    // CUDA minor releases are backward compatible within a major: 12.6 code runs on 12.8.
    if (!v.backend_version || !sys.backend_version ||
        v.backend_version->major != sys.backend_version->major ||
        v.backend_version->minor > sys.backend_version->minor)
      return name + " version (" + or_none(v.backend_version) + ") is not compatible with system " +
             name + " version (" + or_none(sys.backend_version) + ")";
  } else if (backend_is_versioned(v.backend)) {
    if (v.backend_version != sys.backend_version)
      return name + " version (" + or_none(v.backend_version) + ") does not match system " + name +
             " version (" + or_none(sys.backend_version) + ")";
  } else if (v.backend == VariantBackend::metal && (!sys.macos || sys.macos->major < 26)) {
    return "Metal arch variants need macOS 26 or newer (system macOS " +
           (sys.macos ? sys.macos->str() : std::string("unknown")) + ")";
  }
  return {};
}

// Smaller sorts first. See the contract in resolve.hpp for the order.
auto preference_key(const Variant& v, const SystemInfo& sys) {
  const VersionMM bv = v.backend_version.value_or(VersionMM{});
  int group = 0, a = 0, b = 0;
  switch (v.kind) {
    case VariantKind::stable_abi:
      group = 0;
      a = -v.framework_version.major;
      b = -v.framework_version.minor;
      break;
    case VariantKind::torch:
      group = 1;
      a = v.cxx == CxxAbi::none ? 0 : 1;
      b = (!sys.free_threaded && v.python_abi == PythonAbi::abi3t) ? 1 : 0;
      break;
    case VariantKind::tvm_ffi:
      group = 2;
      break;
    case VariantKind::noarch:
      group = 3;
      break;
    case VariantKind::universal:
      group = 4;
      break;
  }
  return std::make_tuple(group, a, b, -bv.major, -bv.minor, v.str());
}

}  // namespace

std::string variant_rejection(const Variant& v, const SystemInfo& sys) {
  if (v.kind == VariantKind::universal) return {};
  if (v.kind == VariantKind::noarch) {
    if (v.backend != sys.backend)
      return "Noarch backend (" + std::string(variant_backend_name(v.backend)) +
             ") does not match system backend (" + std::string(variant_backend_name(sys.backend)) +
             ")";
    return {};
  }
  if (v.cpu != sys.cpu) return "CPU (" + v.cpu + ") does not match system CPU (" + sys.cpu + ")";
  if (v.os != sys.os) return "OS (" + v.os + ") does not match system OS (" + sys.os + ")";
  for (std::string why : {python_rule(v, sys), framework_rule(v, sys), backend_rule(v, sys)})
    if (!why.empty()) return why;
  return {};
}

std::string TraceEntry::verdict() const {
  if (!accepted) return reason;
  return preferred ? "accepted, preferred" : "accepted";
}

std::string TraceEntry::line() const {
  return variant.str() + ": " + verdict();
}

std::string Resolution::trace_text() const {
  std::string out;
  for (const TraceEntry& e : trace) out += (out.empty() ? "" : "\n") + e.line();
  return out;
}

Resolution resolve_variants(std::span<const Variant> candidates, const SystemInfo& sys) {
  Resolution r;
  r.trace.reserve(candidates.size());
  for (const Variant& v : candidates) {
    TraceEntry e{v, false, false, variant_rejection(v, sys)};
    e.accepted = e.reason.empty();
    if (e.accepted && std::find(r.accepted.begin(), r.accepted.end(), v) == r.accepted.end())
      r.accepted.push_back(v);
    r.trace.push_back(std::move(e));
  }
  std::sort(r.accepted.begin(), r.accepted.end(), [&](const Variant& a, const Variant& b) {
    return preference_key(a, sys) < preference_key(b, sys);
  });
  if (!r.accepted.empty())
    for (TraceEntry& e : r.trace) e.preferred = e.accepted && e.variant == r.accepted.front();
  return r;
}

}  // namespace kcache

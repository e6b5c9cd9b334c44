// variant/variant.cpp — variant names, printing and hashing (parsing is variant_parse.cpp).
#include "variant/variant.hpp"

#include <array>
#include <functional>

#include "arch/text_util.hpp"

namespace kcache {
namespace {

struct BackendRow {
  VariantBackend backend;
  std::string_view name;
  std::string_view display;
  bool versioned;
};

constexpr std::array<BackendRow, 8> kBackends = {{
    {VariantBackend::cuda, "cuda", "CUDA", true},
    {VariantBackend::rocm, "rocm", "ROCm", true},
    {VariantBackend::xpu, "xpu", "XPU", true},
    {VariantBackend::cann, "cann", "CANN", true},
    {VariantBackend::cpu, "cpu", "CPU", false},
    {VariantBackend::metal, "metal", "Metal", false},
    {VariantBackend::neuron, "neuron", "Neuron", false},
    {VariantBackend::tpu, "tpu", "TPU", false},
}};

const BackendRow& row(VariantBackend b) noexcept {
  for (const BackendRow& r : kBackends)
    if (r.backend == b) return r;
  return kBackends[4];  // unreachable: every enumerator has a row
}

}  // namespace

std::string VersionMM::str() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<VersionMM> parse_version_mm(std::string_view text) noexcept {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto major = parse_canonical_uint(text.substr(0, dot));
  const auto minor = parse_canonical_uint(text.substr(dot + 1));
  if (!major || !minor) return std::nullopt;
  return VersionMM{*major, *minor};
}

std::string_view variant_backend_name(VariantBackend b) noexcept {
  return row(b).name;
}
std::string_view variant_backend_display(VariantBackend b) noexcept {
  return row(b).display;
}
bool backend_is_versioned(VariantBackend b) noexcept {
  return row(b).versioned;
}

std::optional<VariantBackend> parse_variant_backend(std::string_view full_name) noexcept {
  for (const BackendRow& r : kBackends)
    if (r.name == full_name) return r.backend;
  return std::nullopt;
}

std::string_view cxx_abi_name(CxxAbi abi) noexcept {
  switch (abi) {
    case CxxAbi::cxx11:
      return "cxx11";
    case CxxAbi::cxx98:
      return "cxx98";
    case CxxAbi::none:
      break;
  }
  return "";
}

std::string_view python_abi_name(PythonAbi abi) noexcept {
  return abi == PythonAbi::abi3t ? "abi3t" : "abi3";
}

std::string Variant::str() const {
  switch (kind) {
    case VariantKind::universal:
      return "torch-universal";
    case VariantKind::noarch:
      return "torch-" + std::string(variant_backend_name(backend));
    case VariantKind::torch:
    case VariantKind::stable_abi:
    case VariantKind::tvm_ffi:
      break;
  }
  std::string out = kind == VariantKind::torch        ? "torch-"
                    : kind == VariantKind::stable_abi ? "torch-stable-abi-"
                                                      : "tvm-ffi-";
  out += framework_version.str();
  if (cxx != CxxAbi::none) out += "-" + std::string(cxx_abi_name(cxx));
  out += "-" + std::string(variant_backend_name(backend));
  if (backend_version) out += "-" + backend_version->str();
  out += "-" + std::string(python_abi_name(python_abi)) + "-" + cpu + "-" + os;
  return out;
}

std::size_t VariantHash::operator()(const Variant& v) const noexcept {
  // Equal variants print the same dotted name (every field appears in it), so hashing the
  // name keeps hash and equality in step with no field list to maintain twice.
  return std::hash<std::string>{}(v.str());
}

}  // namespace kcache

// arch/compat.cpp — the load rules of reference/arch.md, one function per backend.
#include "arch/compat.hpp"

#include "arch/amd_processors.hpp"

namespace kcache {
namespace {

Compatibility incompatible(std::string reason) {
  return {false, MatchClass::exact, std::move(reason)};
}
Compatibility compatible(MatchClass c) {
  return {true, c, {}};
}

Compatibility check_cuda(const CudaTarget& bin, CudaCapability dev) {
  const std::string b = bin.str();
  const std::string d = dev.str();
  if (bin.major != dev.major)
    return incompatible(b + " does not run on " + d + ": a cubin never runs across major versions");
  switch (bin.suffix) {
    case CudaSuffix::arch:
      if (bin.minor != dev.minor)
        return incompatible(b + " is arch-specific and runs only on " + bin.capability().str() +
                            "; device is " + d);
      break;
    case CudaSuffix::family:
    case CudaSuffix::none:
      if (bin.minor > dev.minor)
        return incompatible(b + " needs " + bin.capability().str() + " or a newer minor of major " +
                            std::to_string(bin.major) + "; device is " + d);
      break;
  }
  if (bin == device_compile_target(dev)) return compatible(MatchClass::exact);
  switch (bin.suffix) {
    case CudaSuffix::arch:
      return compatible(MatchClass::arch);
    case CudaSuffix::family:
      return compatible(MatchClass::family);
    case CudaSuffix::none:
      break;
  }
  return compatible(MatchClass::baseline);
}

// Empty when the binary's setting loads on the device's; else the reason.
std::string feature_mismatch(std::string_view name, AmdFeature bin, AmdFeature dev,
                             const AmdTarget& b, const AmdTarget& d) {
  if (bin == AmdFeature::any || bin == dev) return {};
  const std::string need = b.str() + " needs " + std::string(name) + " " +
                           std::string(amd_feature_name(bin)) + "; device " + d.str();
  if (dev == AmdFeature::any) return need + " does not state its " + std::string(name) + " setting";
  return need + " has it " + std::string(amd_feature_name(dev));
}

Compatibility check_amd(const AmdTarget& bin, const AmdTarget& dev) {
  bool generic = false;
  if (bin.processor != dev.processor) {
    if (!bin.is_generic())
      return incompatible(bin.str() + " does not run on " + dev.str() + ": different processor");
    if (!generic_covers(bin.processor, dev.processor))
      return incompatible(bin.str() + " does not run on " + dev.str() + ": " + bin.processor +
                          " does not cover " + dev.processor);
    generic = true;
  }
  for (const std::string& why : {feature_mismatch("sramecc", bin.sramecc, dev.sramecc, bin, dev),
                                 feature_mismatch("xnack", bin.xnack, dev.xnack, bin, dev)}) {
    if (!why.empty()) return incompatible(why);
  }
  if (generic) return compatible(MatchClass::generic);
  if (bin.sramecc == dev.sramecc && bin.xnack == dev.xnack) return compatible(MatchClass::exact);
  return compatible(MatchClass::any_feature);
}

}  // namespace

std::string_view match_class_name(MatchClass c) noexcept {
  switch (c) {
    case MatchClass::exact:
      return "exact";
    case MatchClass::arch:
      return "arch";
    case MatchClass::family:
      return "family";
    case MatchClass::baseline:
      return "baseline";
    case MatchClass::any_feature:
      return "any-feature";
    case MatchClass::generic:
      return "generic";
  }
  return "unknown";
}

int match_class_rank(MatchClass c) noexcept {
  switch (c) {
    case MatchClass::exact:
      return 0;
    case MatchClass::arch:
    case MatchClass::any_feature:
      return 1;
    case MatchClass::family:
    case MatchClass::generic:
      return 2;
    case MatchClass::baseline:
      return 3;
  }
  return 4;
}

Compatibility check_compatible(const Target& binary, const Device& device) {
  if (binary.backend() != device.backend())
    return incompatible(binary.str() + " is a " + std::string(backend_name(binary.backend())) +
                        " binary; device " + device.str() + " is a " +
                        std::string(backend_name(device.backend())) + " device");
  if (const CudaTarget* c = binary.cuda()) return check_cuda(*c, *device.cuda());
  return check_amd(*binary.amd(), *device.amd());
}

}  // namespace kcache

// arch/target.cpp — backend dispatch for target and device spellings.
#include "arch/target.hpp"

#include "arch/text_util.hpp"

namespace kcache {
namespace {

bool looks_amd(std::string_view text) {
  return to_lower(text.substr(0, 3)) == "gfx";
}

}  // namespace

std::string_view backend_name(Backend backend) noexcept {
  return backend == Backend::cuda ? "cuda" : "hip";
}

std::string Target::str() const {
  if (const CudaTarget* c = cuda()) return c->str();
  return amd()->str();
}

Result<Target> parse_target(std::string_view text) {
  if (looks_amd(text)) {
    KC_TRY_ASSIGN(AmdTarget t, parse_amd_target(text));
    return Target(std::move(t));
  }
  KC_TRY_ASSIGN(CudaTarget t, parse_cuda_target(text));
  return Target(t);
}

std::string Device::str() const {
  if (const CudaCapability* c = cuda()) return c->str();
  return amd()->str();
}

Target Device::compile_target() const {
  if (const CudaCapability* c = cuda()) return Target(device_compile_target(*c));
  return Target(*amd());
}

Result<Device> parse_device(std::string_view text) {
  if (looks_amd(text)) {
    KC_TRY_ASSIGN(AmdTarget t, parse_amd_target(text));
    return Device(std::move(t));
  }
  // A bare "P.Q" is a capability; anything else must be a CUDA target naming one.
  if (text.find('.') != std::string_view::npos && text.find_first_of("aAfF") == text.npos) {
    KC_TRY_ASSIGN(CudaCapability cap, parse_cuda_capability(text));
    return Device(cap);
  }
  auto target = parse_cuda_target(text);
  if (!target.ok())
    return make_error(Errc::invalid_argument,
                      "invalid device '" + std::string(text) +
                          "': expected a compute capability (9.0), a CUDA target (sm_90a) "
                          "or an AMD target ID (gfx942:sramecc+:xnack-)");
  return Device(target->capability());
}

}  // namespace kcache

// arch/target.hpp — one GPU target of either backend, and a device as selection sees it.
//
// Contract:
//  * `parse_target` accepts every CUDA spelling of cuda_target.hpp and every AMD target ID of
//    amd_target.hpp (anything starting with `gfx`, case-insensitively, is read as AMD).
//    `str()` is the canonical form (`sm_90a`, `gfx942:sramecc+:xnack-`) and round-trips.
//  * `parse_device` accepts a compute capability (`10.3`), a CUDA target naming the device's
//    capability (`sm_103a` → 10.3; the suffix is ignored) or an AMD target ID. For AMD devices a
//    feature left out means the device's setting is unknown: no code object pinning that
//    feature is considered compatible with it (see compat.hpp).
//  * `Device::compile_target()` is what kcache compiles for on that device.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "arch/amd_target.hpp"
#include "arch/cuda_target.hpp"
#include "kcache/result.hpp"

namespace kcache {

enum class Backend : std::uint8_t { cuda, hip };

// "cuda" / "hip".
std::string_view backend_name(Backend backend) noexcept;

class Target {
 public:
  Target(CudaTarget t) : v_(std::move(t)) {}  // NOLINT(google-explicit-constructor)
  Target(AmdTarget t) : v_(std::move(t)) {}   // NOLINT(google-explicit-constructor)

  Backend backend() const noexcept { return v_.index() == 0 ? Backend::cuda : Backend::hip; }
  // nullptr when the target is of the other backend.
  const CudaTarget* cuda() const noexcept { return std::get_if<CudaTarget>(&v_); }
  const AmdTarget* amd() const noexcept { return std::get_if<AmdTarget>(&v_); }
  std::string str() const;

  friend bool operator==(const Target&, const Target&) = default;
  // CUDA targets order before AMD ones; usable as a map key.
  friend auto operator<=>(const Target&, const Target&) = default;

 private:
  std::variant<CudaTarget, AmdTarget> v_;
};

Result<Target> parse_target(std::string_view text);

class Device {
 public:
  Device(CudaCapability c) : v_(c) {}        // NOLINT(google-explicit-constructor)
  Device(AmdTarget t) : v_(std::move(t)) {}  // NOLINT(google-explicit-constructor)

  Backend backend() const noexcept { return v_.index() == 0 ? Backend::cuda : Backend::hip; }
  const CudaCapability* cuda() const noexcept { return std::get_if<CudaCapability>(&v_); }
  const AmdTarget* amd() const noexcept { return std::get_if<AmdTarget>(&v_); }
  std::string str() const;  // "9.0" or the AMD target ID
  Target compile_target() const;

  friend bool operator==(const Device&, const Device&) = default;

 private:
  std::variant<CudaCapability, AmdTarget> v_;
};

Result<Device> parse_device(std::string_view text);

}  // namespace kcache

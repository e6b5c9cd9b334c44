// arch/binary_check.cpp — the publishing gate (binary_check.hpp), on what elf_inspect reads.
#include "arch/binary_check.hpp"

#include "arch/elf_inspect.hpp"

namespace kcache {
namespace {

Error mismatch(const Target& declared, const std::string& why) {
  return make_error(Errc::corrupt,
                    "binary does not match declared target " + declared.str() + ": " + why);
}

Status check_cuda(const BinaryInfo& info, const CudaTarget& got, const CudaTarget& want,
                  const Target& declared) {
  if (got.sm() != want.sm())
    return mismatch(declared, "the cubin is sm_" + std::to_string(got.sm()));
  switch (info.suffix_evidence) {
    case SuffixEvidence::toolkit_note:
      // The ptxas options name the exact target: `f` vs unsuffixed load alike, but a
      // manifest that says one and ships the other is wrong about what it built.
      if (got.suffix != want.suffix)
        return mismatch(declared, "the cubin was built for " + got.str() + " (ptxas note)");
      break;
    case SuffixEvidence::compat_attribute:
    case SuffixEvidence::e_flags:
      // Only "arch-specific or not" is recorded. That is the distinction that matters: an
      // `a` cubin served under a family/baseline name would be picked for devices it cannot
      // load on.
      if ((got.suffix == CudaSuffix::arch) != (want.suffix == CudaSuffix::arch))
        return mismatch(declared,
                        got.suffix == CudaSuffix::arch
                            ? "the cubin is arch-specific (sm_" + std::to_string(got.sm()) + "a)"
                            : "the cubin is not arch-specific");
      break;
    case SuffixEvidence::none:
      break;  // nothing recorded beyond the SM: the SM check is all that can be verified
  }
  return {};
}

}  // namespace

Status check_binary_matches(std::span<const std::byte> bytes, const Target& declared) {
  KC_TRY_ASSIGN(BinaryInfo info, inspect_binary(bytes));
  switch (info.kind) {
    case BinaryKind::ptx:
      return mismatch(declared, "it is PTX text only (" +
                                    (info.target ? info.target->str() : std::string("no target")) +
                                    "), not native code");
    case BinaryKind::cuda_fatbin:
      return mismatch(declared, std::string(info.has_native ? "" : "PTX only: ") +
                                    "a CUDA fatbin (" + info.describe() +
                                    "); kcache stores the single cubin");
    case BinaryKind::offload_bundle:
      return mismatch(declared, "a clang offload bundle; store the code object extracted for " +
                                    declared.str());
    case BinaryKind::cubin:
    case BinaryKind::amd_code_object:
      break;
  }
  const std::uint16_t want_machine = declared.backend() == Backend::cuda ? kEmCuda : kEmAmdgpu;
  if (info.elf.machine != want_machine)
    return mismatch(declared, "the ELF machine is " + std::to_string(info.elf.machine) + ", a " +
                                  std::string(binary_kind_name(info.kind)) +
                                  ", but the declared target is " +
                                  std::string(backend_name(declared.backend())));
  if (!info.has_native)
    return mismatch(declared, info.has_ptx ? "it carries PTX but no native code"
                                           : "it carries no executable code");
  if (const CudaTarget* want = declared.cuda())
    return check_cuda(info, *info.target->cuda(), *want, declared);
  const AmdTarget& got = *info.target->amd();
  if (!(got == *declared.amd())) return mismatch(declared, "the code object is " + got.str());
  return {};
}

}  // namespace kcache

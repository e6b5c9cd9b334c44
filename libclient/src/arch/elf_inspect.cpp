// arch/elf_inspect.cpp — decoding the target of cubins and AMD code objects.
//
// Facts measured on this host's compilers (throwaway programs, `readelf -h -S -n -x`), which
// this decoder and docs/targets.md rely on:
//
// NVRTC 13.0 (libnvrtc.so.13, CUDA 13.0.88; same bytes from `nvcc -cubin` and `ptxas`):
//  * e_ident: ELFCLASS64, little-endian, EI_OSABI 0x41 (65, LLVM ELFOSABI_CUDA_V2),
//    EI_ABIVERSION 8; e_type ET_EXEC (ET_REL with -rdc=true); e_machine 190.
//  * e_flags = 0x0600_SS_LL: SM number in bits 8..15; low byte 0x04 for sm_75..sm_90 and 0x02
//    for sm_100 and newer; bits 24..31 = 0x06. Measured: sm_75 0x06004b04, sm_80 0x06005004,
//    sm_86 0x06005604, sm_89 0x06005904, sm_90 AND sm_90a 0x06005a04, sm_100/100a/100f
//    0x06006402, sm_103* 0x06006702, sm_110* 0x06006e02, sm_120/120a/120f 0x06007802,
//    sm_121* 0x06007902.
//  * So e_flags does NOT distinguish sm_90 from sm_90a nor `a` from `f`: LLVM's
//    EF_CUDA_ACCELERATORS (0x8 in ABI v8) and EF_CUDA_ACCELERATORS_V1 (0x800 in ABI v7) are
//    never set by CUDA 13.0. (Older ABI v7 cubins, EI_OSABI 0x33, keep the SM in the low byte
//    and set 0x800 for `a`; decoded here but not measured: no CUDA 12 on this host.)
//  * `.nv.compat` (type SHT_LOPROC+0x86) is a list of 4-byte attributes {u8 format, u8 id,
//    value}; format 2 has a one-byte value at +2, format 3 a u16, format 4 a u16 length and
//    that many bytes. Attribute 0x09 is 1 for `a` targets (sm_90a, sm_100a, sm_120a…) and 0
//    for unsuffixed AND `f` targets: sm_100 and sm_100f cubins have identical .nv.compat.
//  * `.note.nv.tkinfo` (owner "NVIDIA Corp", type 2000): u32 version 2, then u32 offsets into a
//    string pool at +24 — +4 object name, +8 tool ("ptxas"), +12 tool version ("Cuda
//    compilation tools, release 13.0, V13.0.88"), +16 branch, +20 options ("-arch sm_100f ").
//    The options string is the ONLY place a cubin records `f`; sm_100 vs sm_100f cubins differ
//    in nothing else.
//  * `.note.nv.cuinfo` (type 1000): u16 version 2, u16 SM, u16 toolkit version (0x82 = 130).
//  * NVRTC cubins carry no PTX. PTX appears (a) as text from nvrtcGetPTX (`.version 9.0`,
//    `.target sm_90a`, `.address_size 64`; compute_XX compiles produce no cubin at all),
//    (b) as kind-1 entries of a fatbin, (c) as `.nv_debug_ptx_txt` sections of cubins built
//    with -G or -lineinfo (alongside SASS in .text.*); -lineinfo for sm_120f also adds
//    `.nv.merc.*` / `.nv.capmerc.*` sections.
//
// hiprtc (Debian libamdhip64.so.5, ROCm 5.2, comgr 2.4), `--offload-arch=<id>`:
//  * Returns a raw ELF code object, never an offload bundle (also with -fgpu-rdc); a second
//    --offload-arch fails ("cannot specify -o when generating multiple output files").
//    Processors this LLVM lacks (gfx940, gfx942, gfx1100, gfx1200, generic targets) abort the
//    whole process (munmap_chunk(): invalid pointer), so compiles must run in a separate
//    process. Newer ROCm hipcc fat binaries are offload bundles: the daemon stores only the
//    code object unbundled for the declared target (gpu_containers.hpp extract_code_object).
//  * e_ident: ELFCLASS64, EI_OSABI 64 (ELFOSABI_AMDGPU_HSA), EI_ABIVERSION 2 (code object v4);
//    e_type ET_DYN; e_machine 224.
//  * e_flags (code object v4+ layout, LLVM AMDGPUUsage): mach = e_flags & 0xff; xnack in bits
//    8..9 and sramecc in bits 10..11, each 0 unsupported, 1 any, 2 off, 3 on; v6 generic
//    targets carry a generic version in bits 24..31. Measured: gfx90a 0x53f (any/any),
//    gfx90a:xnack- 0x63f, gfx90a:xnack+ 0x73f, gfx90a:sramecc+:xnack- 0xe3f (also for input
//    order xnack-:sramecc+), gfx908 0x530, gfx1030 0x036 (no xnack/sramecc on RDNA).
//  * Code object v2/v3 (EI_ABIVERSION 0/1) used other feature bits; they are refused.
#include "arch/elf_inspect.hpp"

#include <cstdio>

#include "arch/amd_processors.hpp"
#include "arch/gpu_containers.hpp"

namespace kcache {
namespace {

constexpr std::uint8_t kOsAbiAmdHsa = 64;
constexpr std::uint8_t kNvCompatArchSpecific = 0x09;
constexpr std::uint32_t kNoteNvTkinfo = 2000;

Error corrupt(std::string message) {
  return make_error(Errc::corrupt, std::move(message));
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

std::string machine_name(std::uint16_t m) {
  switch (m) {
    case 3:
      return "EM_386 (3)";
    case 40:
      return "EM_ARM (40)";
    case 62:
      return "EM_X86_64 (62)";
    case 183:
      return "EM_AARCH64 (183)";
    case kEmCuda:
      return "EM_CUDA (190)";
    case kEmAmdgpu:
      return "EM_AMDGPU (224)";
    default:
      return std::to_string(m);
  }
}

// The NUL-terminated string at `offset` of the tkinfo pool, or empty.
std::string_view pool_string(std::span<const std::byte> desc, std::uint64_t offset) {
  constexpr std::uint64_t kPool = 24;
  if (desc.size() <= kPool || offset >= desc.size() - kPool) return {};
  const std::string_view pool(reinterpret_cast<const char*>(desc.data()) + kPool,
                              desc.size() - kPool);
  const std::string_view rest = pool.substr(offset);
  return rest.substr(0, rest.find('\0'));
}

void read_tkinfo(const ElfFile& elf, BinaryInfo* info) {
  const ElfSection* s = elf.find(".note.nv.tkinfo");
  if (s == nullptr) return;
  auto notes = parse_notes(s->data);
  if (!notes.ok()) return;  // a damaged note only loses evidence; the header still decides
  for (const ElfNote& n : *notes) {
    if (n.type != kNoteNvTkinfo || n.desc.size() < 24) continue;
    info->toolkit = std::string(pool_string(n.desc, load_le32(n.desc, 12)));
    info->tool_options = std::string(pool_string(n.desc, load_le32(n.desc, 20)));
  }
}

// The `-arch X` / `-arch=X` value of the ptxas options, or empty.
std::string_view arch_option(std::string_view options) {
  for (std::string_view key : {"-arch=", "-arch "}) {
    const auto pos = options.find(key);
    if (pos == std::string_view::npos) continue;
    std::string_view v = options.substr(pos + key.size());
    while (v.starts_with(' ')) v.remove_prefix(1);
    return v.substr(0, v.find_first_of(" \t"));
  }
  return {};
}

// .nv.compat attribute 0x09 (arch-specific), or nullopt when absent or unreadable.
std::optional<bool> compat_arch_specific(const ElfFile& elf) {
  const ElfSection* s = elf.find(".nv.compat");
  if (s == nullptr) return std::nullopt;
  const auto d = s->data;
  std::size_t at = 0;
  while (in_bounds(at, 4, d.size())) {
    const auto format = static_cast<std::uint8_t>(d[at]);
    const auto id = static_cast<std::uint8_t>(d[at + 1]);
    if (format == 2 && id == kNvCompatArchSpecific)
      return static_cast<std::uint8_t>(d[at + 2]) != 0;
    if (format == 4) {
      at += 4 + load_le16(d, at + 2);
    } else if (format >= 1 && format <= 3) {
      at += 4;
    } else {
      return std::nullopt;  // an unknown format: stop rather than guess its size
    }
  }
  return std::nullopt;
}

Status decode_cubin(const ElfFile& elf, BinaryInfo* info) {
  const ElfHeader& h = elf.header();
  const bool v2_abi = h.abi_version >= 8;  // CUDA 13: SM moved to bits 8..15
  const int sm =
      v2_abi ? static_cast<int>((h.flags >> 8) & 0xff) : static_cast<int>(h.flags & 0xff);
  const bool accel_flag = (h.flags & (v2_abi ? 0x8u : 0x800u)) != 0;
  if (sm < 10) return corrupt("cubin e_flags " + hex(h.flags) + " hold no valid SM number");
  CudaTarget t{sm / 10, sm % 10, accel_flag ? CudaSuffix::arch : CudaSuffix::none};
  info->suffix_evidence = accel_flag ? SuffixEvidence::e_flags : SuffixEvidence::none;
  if (const auto compat = compat_arch_specific(elf)) {
    t.suffix = *compat ? CudaSuffix::arch : CudaSuffix::none;
    info->suffix_evidence = SuffixEvidence::compat_attribute;
  }
  read_tkinfo(elf, info);
  if (const std::string_view arch = arch_option(info->tool_options); !arch.empty()) {
    if (auto noted = parse_cuda_target(arch); noted.ok()) {
      if (noted->sm() != sm)
        return corrupt("cubin e_flags say sm_" + std::to_string(sm) + " but its ptxas note says " +
                       std::string(arch));
      t.suffix = noted->suffix;
      info->suffix_evidence = SuffixEvidence::toolkit_note;
    }
  }
  info->target = Target(t);
  return {};
}

// The v4+ two-bit feature field: 0 unsupported, 1 any, 2 off, 3 on.
AmdFeature amd_feature(std::uint32_t field) {
  return field == 2 ? AmdFeature::off : field == 3 ? AmdFeature::on : AmdFeature::any;
}

Status decode_amd(const ElfFile& elf, BinaryInfo* info) {
  const ElfHeader& h = elf.header();
  if (h.os_abi != kOsAbiAmdHsa)
    return corrupt("AMD code object OS ABI " + std::to_string(h.os_abi) +
                   " is not amdhsa (64); only HSA code objects load through HIP");
  if (h.abi_version < 2)
    return corrupt("AMD code object v" + std::to_string(h.abi_version + 2) + " (EI_ABIVERSION " +
                   std::to_string(h.abi_version) +
                   ") is not supported; kcache reads code object v4 and newer");
  const AmdProcessorInfo* p = find_amd_processor_by_mach(h.flags & 0xff);
  if (p == nullptr) return corrupt("unknown AMDGPU mach " + hex(h.flags & 0xff) + " in e_flags");
  AmdTarget t;
  t.processor = std::string(p->name);
  t.xnack = amd_feature((h.flags >> 8) & 0x3);
  t.sramecc = amd_feature((h.flags >> 10) & 0x3);
  if (p->is_generic()) info->amd_generic_version = static_cast<int>(h.flags >> 24);
  info->target = Target(std::move(t));
  return {};
}

Result<BinaryInfo> inspect_container(std::span<const std::byte> bytes) {
  BinaryInfo info;
  if (has_fatbin_magic(bytes)) {
    info.kind = BinaryKind::cuda_fatbin;
    KC_TRY_ASSIGN(auto entries, parse_fatbin(bytes));
    for (const FatbinEntry& e : entries) {
      info.has_ptx |= e.is_ptx();
      info.has_native |= e.is_elf();
      const std::string name = (e.is_ptx() ? "compute_" : "sm_") + std::to_string(e.sm);
      info.contents.push_back(name + (e.is_ptx() ? " ptx" : e.is_elf() ? " elf" : " other"));
    }
    return info;
  }
  if (has_offload_bundle_magic(bytes)) {
    info.kind = BinaryKind::offload_bundle;
    KC_TRY_ASSIGN(auto entries, parse_offload_bundle(bytes));
    for (const BundleEntry& e : entries) {
      info.has_native |= bundle_entry_target(e.id).has_value() && !e.data.empty();
      info.contents.emplace_back(e.id);
    }
    return info;
  }
  if (has_compressed_bundle_magic(bytes))
    return corrupt("compressed clang offload bundle (CCOB); unbundle it to a code object");
  if (auto ptx = sniff_ptx(bytes)) {
    info.kind = BinaryKind::ptx;
    info.has_ptx = true;
    if (ptx->target) info.target = Target(*ptx->target);
    return info;
  }
  return corrupt("not a GPU binary: no ELF magic, and not a fatbin, offload bundle or PTX text");
}

}  // namespace

std::string_view binary_kind_name(BinaryKind kind) noexcept {
  switch (kind) {
    case BinaryKind::cubin:
      return "cubin";
    case BinaryKind::amd_code_object:
      return "amd-code-object";
    case BinaryKind::ptx:
      return "ptx";
    case BinaryKind::cuda_fatbin:
      return "cuda-fatbin";
    case BinaryKind::offload_bundle:
      return "offload-bundle";
  }
  return "unknown";
}

std::string BinaryInfo::describe() const {
  std::string out(binary_kind_name(kind));
  if (target) out += " " + target->str();
  if (kind == BinaryKind::cubin || kind == BinaryKind::amd_code_object)
    out += " (e_flags " + hex(elf.flags) + ")";
  if (has_native) out += ", native code";
  if (has_ptx) out += ", PTX";
  if (relocatable) out += ", relocatable";
  for (const std::string& c : contents) out += ", [" + c + "]";
  return out;
}

Result<BinaryInfo> inspect_binary(std::span<const std::byte> bytes) {
  if (!has_elf_magic(bytes)) return inspect_container(bytes);
  KC_TRY_ASSIGN(ElfFile elf, ElfFile::parse(bytes));
  BinaryInfo info;
  info.elf = elf.header();
  info.relocatable = info.elf.type == 1;
  for (const ElfSection& s : elf.sections()) {
    info.has_native |= (s.flags & kShfExecinstr) != 0 && !s.data.empty();
    info.has_ptx |= s.name.find("ptx") != std::string_view::npos;
  }
  if (info.elf.machine == kEmCuda) {
    info.kind = BinaryKind::cubin;
    KC_TRY(decode_cubin(elf, &info));
  } else if (info.elf.machine == kEmAmdgpu) {
    info.kind = BinaryKind::amd_code_object;
    KC_TRY(decode_amd(elf, &info));
  } else {
    return corrupt("ELF machine " + machine_name(info.elf.machine) +
                   " is neither EM_CUDA (190) nor EM_AMDGPU (224)");
  }
  return info;
}

}  // namespace kcache

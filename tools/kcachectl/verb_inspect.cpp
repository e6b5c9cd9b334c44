// kcachectl inspect — what GPU binaries were built for, read from their own bytes.
//
// Runs locally over libclient/src/arch (no daemon). A file is valid when it is one native
// module kcache can store and serve: a cubin or an AMD code object carrying native code, or a
// host shared object of this machine with device code embedded (a FlashInfer `<mod>.so`),
// whose entries are listed one per line (kind, target, compression, sizes). PTX text,
// fatbins and offload bundles are recognised and described, but are not valid modules;
// neither is anything inspect_binary refuses. Exit 1 when any file is invalid.
#include <fcntl.h>

#include <cstdio>
#include <iostream>
#include <span>

#include "arch/elf_inspect.hpp"
#include "arch/host_object.hpp"
#include "common/fd.hpp"
#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

struct InspectArgs {
  std::vector<std::string> files;
} args;

kcache::Result<std::string> read_file(const std::string& path) {
  const kcache::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return kcache::errno_error(kcache::Errc::io, "cannot read '" + path + "'");
  auto bytes = kcache::read_whole_file(fd.get());
  if (!bytes.ok())
    return kcache::make_error(kcache::Errc::io,
                              "cannot read '" + path + "': " + bytes.error().message);
  return bytes;
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

std::string machine_text(std::uint16_t machine) {
  if (machine == kcache::kEmCuda) return "EM_CUDA 190";
  if (machine == kcache::kEmAmdgpu) return "EM_AMDGPU 224";
  return std::to_string(machine);
}

std::string_view evidence_name(kcache::SuffixEvidence e) {
  switch (e) {
    case kcache::SuffixEvidence::toolkit_note:
      return "ptxas-note";
    case kcache::SuffixEvidence::compat_attribute:
      return "nv-compat";
    case kcache::SuffixEvidence::e_flags:
      return "e-flags";
    case kcache::SuffixEvidence::none:
      break;
  }
  return "none";
}

bool is_elf(const kcache::BinaryInfo& info) {
  return info.kind == kcache::BinaryKind::cubin || info.kind == kcache::BinaryKind::amd_code_object;
}

std::string contents_text(const kcache::BinaryInfo& info) {
  std::string out;
  for (const std::string& c : info.contents) out += (out.empty() ? "" : ", ") + c;
  return "[" + out + "]";
}

// Why a recognised binary is not one servable native module; empty when it is one.
std::string why_not_module(const kcache::BinaryInfo& info) {
  const std::string target = info.target ? " for " + info.target->str() : std::string();
  switch (info.kind) {
    case kcache::BinaryKind::ptx:
      return "PTX text" + target + ", not a native module";
    case kcache::BinaryKind::cuda_fatbin:
      return "a CUDA fatbin " + contents_text(info) + ", not a single native module";
    case kcache::BinaryKind::offload_bundle:
      return "a clang offload bundle " + contents_text(info) + ", not a single native module";
    case kcache::BinaryKind::cubin:
    case kcache::BinaryKind::amd_code_object:
      break;
  }
  if (!info.has_native)
    return std::string("a ") + std::string(kcache::binary_kind_name(info.kind)) + target +
           (info.has_ptx ? " with PTX but no native code" : " with no executable code");
  return {};
}

// "sm_90a cubin (EM_CUDA 190, e_flags 0x6005a04): native code, no PTX, suffix from ptxas-note"
std::string describe(const kcache::BinaryInfo& info) {
  std::string out = info.target->str() + " " + std::string(kcache::binary_kind_name(info.kind)) +
                    " (" + machine_text(info.elf.machine) + ", e_flags " + hex(info.elf.flags) +
                    "): native code, " + (info.has_ptx ? "PTX" : "no PTX");
  if (info.relocatable) out += ", relocatable";
  if (info.kind == kcache::BinaryKind::cubin)
    out += ", suffix from " + std::string(evidence_name(info.suffix_evidence));
  return out;
}

Json info_json(const kcache::BinaryInfo& info) {
  const bool elf = is_elf(info);
  return Json{
      {"kind", kcache::binary_kind_name(info.kind)},
      {"target", info.target ? Json(info.target->str()) : Json()},
      {"machine", elf ? Json(info.elf.machine) : Json()},
      {"e_flags", elf ? Json(info.elf.flags) : Json()},
      {"has_native", info.has_native},
      {"has_ptx", info.has_ptx},
      {"relocatable", info.relocatable},
      {"suffix_evidence", evidence_name(info.suffix_evidence)},
      {"toolkit", info.toolkit},
      {"tool_options", info.tool_options},
      {"contents", info.contents},
  };
}

// The entries of a host object; the error says why it is not a servable module.
Json host_object_json(const kcache::HostObjectInfo& info, std::string& error) {
  Json entries = Json::array();
  for (const kcache::HostCodeEntry& e : info.entries)
    entries.push_back({{"section", e.section},
                       {"container", e.container},
                       {"kind", e.kind},
                       {"target", e.target ? Json(e.target->str()) : Json()},
                       {"compression", kcache::entry_compression_name(e.compression)},
                       {"stored_size", e.stored_size},
                       {"size", e.size},
                       {"note", e.note}});
  if (info.elf.machine != kcache::host_elf_machine())
    error = "a host object for ELF machine " + std::to_string(info.elf.machine) +
            ", not this host's (" + std::to_string(kcache::host_elf_machine()) + ")";
  else if (info.entries.empty())
    error = "a host object with no embedded device code (.nv_fatbin, .hip_fatbin)";
  return Json{{"kind", "host-object"},
              {"machine", info.elf.machine},
              {"containers", info.containers},
              {"entries", std::move(entries)}};
}

std::string host_object_text(const kcache::HostObjectInfo& info) {
  std::string out = info.describe();
  for (const kcache::HostCodeEntry& e : info.entries) {
    out += "\n  " + e.section + "[" + std::to_string(e.container) + "] " + e.kind + " " +
           (e.target ? e.target->str() : std::string("-")) + ", " +
           std::string(kcache::entry_compression_name(e.compression)) + ", " +
           std::to_string(e.stored_size) + " bytes stored, " + std::to_string(e.size) + " bytes";
    if (!e.note.empty()) out += " (" + e.note + ")";
  }
  return out;
}

// One file: its JSON document; `text` gets the human line(s).
Json inspect_one(const std::string& path, std::string& text) {
  Json doc{{"file", path}};
  std::string error;
  auto bytes = read_file(path);
  if (bytes.ok() && kcache::is_host_object(std::as_bytes(std::span(*bytes)))) {
    auto host = kcache::inspect_host_object(std::as_bytes(std::span(*bytes)));
    if (host.ok()) {
      doc.update(host_object_json(*host, error));
      text = host_object_text(*host);
    } else {
      error = host.error().message;
    }
  } else {
    auto info = bytes.ok() ? kcache::inspect_binary(std::as_bytes(std::span(*bytes)))
                           : kcache::Result<kcache::BinaryInfo>(bytes.error());
    if (info.ok()) {
      doc.update(info_json(*info));
      error = why_not_module(*info);
      if (error.empty()) text = describe(*info);
    } else {
      error = info.error().message;
    }
  }
  doc["valid"] = error.empty();
  if (!error.empty()) {
    doc["error"] = error;
    text = "invalid: " + error;
  }
  return doc;
}

}  // namespace

void setup_inspect(Options& o) {
  o.add_positionals("FILE", args.files,
                    "Cubins, AMD code objects, host .so files with device code (or anything)");
}

int run_inspect(const Context& ctx) {
  bool all_valid = true;
  Json out = Json::array();
  for (const std::string& path : args.files) {
    std::string text;
    Json doc = inspect_one(path, text);
    all_valid &= doc["valid"].get<bool>();
    if (ctx.json)
      out.push_back(std::move(doc));
    else
      std::cout << path << ": " << text << '\n';
  }
  if (ctx.json) print_json(out);
  return all_valid ? kExitOk : kExitFailure;
}

}  // namespace kcachectl

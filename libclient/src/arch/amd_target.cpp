// arch/amd_target.cpp — parsing and printing AMD target IDs.
#include "arch/amd_target.hpp"

#include "arch/amd_processors.hpp"
#include "arch/text_util.hpp"

namespace kcache {
namespace {

Error bad_target(std::string_view text, const std::string& why) {
  return make_error(Errc::invalid_argument,
                    "invalid AMD target ID '" + std::string(text) + "': " + why);
}

// `gfx` + at least two digits + one hex digit: gfx90a, gfx942, gfx1030, gfx1250.
bool well_formed_processor(std::string_view name) {
  if (!name.starts_with("gfx") || name.size() < 6 || name.size() > 8) return false;
  const std::string_view body = name.substr(3);
  const char last = body.back();
  return all_digits(body.substr(0, body.size() - 1)) &&
         (is_ascii_digit(last) || (last >= 'a' && last <= 'f'));
}

void append_feature(std::string* out, std::string_view name, AmdFeature f) {
  if (f == AmdFeature::any) return;
  *out += ':';
  *out += name;
  *out += f == AmdFeature::on ? '+' : '-';
}

}  // namespace

std::string_view amd_feature_name(AmdFeature f) noexcept {
  switch (f) {
    case AmdFeature::on:
      return "on";
    case AmdFeature::off:
      return "off";
    case AmdFeature::any:
      break;
  }
  return "any";
}

std::string AmdTarget::str() const {
  std::string out = processor;
  append_feature(&out, "sramecc", sramecc);  // alphabetical: the canonical order
  append_feature(&out, "xnack", xnack);
  return out;
}

bool AmdTarget::is_generic() const noexcept {
  return processor.ends_with("-generic");
}

int AmdTarget::pinned_features() const noexcept {
  return (sramecc != AmdFeature::any ? 1 : 0) + (xnack != AmdFeature::any ? 1 : 0);
}

Result<AmdTarget> parse_amd_target(std::string_view text) {
  if (text.empty()) return bad_target(text, "empty");
  const std::string lower = to_lower(text);
  const auto parts = split(lower, ':');
  AmdTarget target;
  target.processor = std::string(parts[0]);
  const AmdProcessorInfo* info = find_amd_processor(target.processor);
  if (info == nullptr) {
    // Unknown generic families cannot be matched to devices, so they are refused outright;
    // an unknown but well-formed processor is a newer GPU and stays usable by exact match.
    if (target.processor.ends_with("-generic"))
      return bad_target(text, "unknown generic target '" + target.processor + "'");
    if (!well_formed_processor(target.processor))
      return bad_target(text, "unknown processor '" + target.processor + "'");
  }
  bool seen_sramecc = false;
  bool seen_xnack = false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view part = parts[i];
    if (part.size() < 2 || (part.back() != '+' && part.back() != '-'))
      return bad_target(text, "feature '" + std::string(part) + "' must end in + or -");
    const std::string_view name = part.substr(0, part.size() - 1);
    const AmdFeature value = part.back() == '+' ? AmdFeature::on : AmdFeature::off;
    bool* seen = nullptr;
    AmdFeature* slot = nullptr;
    bool supported = true;
    if (name == "sramecc") {
      seen = &seen_sramecc;
      slot = &target.sramecc;
      supported = info == nullptr || info->sramecc;
    } else if (name == "xnack") {
      seen = &seen_xnack;
      slot = &target.xnack;
      supported = info == nullptr || info->xnack;
    } else {
      return bad_target(
          text, "unknown feature '" + std::string(name) + "' (only sramecc and xnack exist)");
    }
    if (*seen) return bad_target(text, "feature '" + std::string(name) + "' given twice");
    if (!supported)
      return bad_target(text, target.processor + " has no " + std::string(name) + " setting");
    *seen = true;
    *slot = value;
  }
  return target;
}

}  // namespace kcache

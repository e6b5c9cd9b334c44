// fuzz_variant.cpp — the build variant parser and the system description (variant/).
//
// Input: lines; each is parsed as a variant, the last one also as a system description,
// against which the parsed variants are resolved. Checked: a variant's dotted form parses
// back equal with an equal hash, a system prints back equal, and every accepted variant
// passes the rules.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "arch/text_util.hpp"
#include "variant/resolve.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> lines = kcache::split(input, '\n');
  std::vector<kcache::Variant> variants;
  for (std::string_view line : lines) {
    auto v = kcache::parse_variant(line);
    if (!v.ok()) continue;
    auto again = kcache::parse_variant(v->str());
    if (!again.ok() || !(*again == *v) ||
        kcache::VariantHash{}(*again) != kcache::VariantHash{}(*v))
      __builtin_trap();
    variants.push_back(*v);
  }
  auto sys = kcache::parse_system_spec(lines.back());
  if (!sys.ok()) return 0;
  auto again = kcache::parse_system_spec(sys->str());
  if (!again.ok() || !(*again == *sys)) __builtin_trap();
  for (const kcache::Variant& v : kcache::resolve_variants(variants, *sys).accepted)
    if (!kcache::variant_rejection(v, *sys).empty()) __builtin_trap();
  return 0;
}

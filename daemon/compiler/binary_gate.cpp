#include "compiler/binary_gate.hpp"

#include <span>
#include <string>

#include "arch/binary_check.hpp"
#include "arch/elf_inspect.hpp"
#include "arch/target.hpp"

namespace kcache::daemon {

Status check_module_binary(std::string_view bytes, std::string_view target) {
  KC_TRY_ASSIGN(const Target declared, parse_target(target));
  auto checked = check_binary_matches(std::as_bytes(std::span(bytes.data(), bytes.size())), declared);
  if (!checked.ok())
    return make_error(Errc::corrupt, "module for " + std::string(target) + " rejected: " +
                                         checked.error().message);
  return {};
}

}  // namespace kcache::daemon

// common/text.hpp — the one policy for text a client or a disk can hand kcache (names,
// versions, header names, provider and file names) where it is shown to people or programs.
//
// Contract:
//  * `utf8_valid(s)`: s is well-formed UTF-8 (no overlong forms, surrogates or code points
//    past U+10FFFF).
//  * `check_label(what, s)`: a name a request gives (module name, version, header name) is
//    UTF-8 without control characters (C0, DEL); else Errc::invalid_argument naming `what`
//    and showing the text escaped. Such names are refused at the door.
//  * `printable(s)`: what every renderer shows for text it cannot refuse (a directory name on
//    the disk, a row written by an older kcached, a caller's option quoted in an error):
//    valid UTF-8 passes unchanged except control characters; every byte of an ill-formed
//    sequence and every control character becomes `\xNN`. The result is valid UTF-8 without
//    control characters, so it can go into JSON, a log line, journald or D-Bus as is.
#pragma once

#include <string>
#include <string_view>

#include "kcache/result.hpp"

namespace kcache {

bool utf8_valid(std::string_view s) noexcept;
Status check_label(std::string_view what, std::string_view s);
std::string printable(std::string_view s);

}  // namespace kcache

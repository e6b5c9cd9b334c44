// kcachectl/output.hpp — how kcachectl prints: errors, JSON, tables, sizes and durations.
//
// Contract:
//  * fail()/usage() print "kcachectl: <message>" (plus the compiler log, if any) to stderr
//    and return the exit code (1 or 2).
//  * parse_json() turns a daemon reply into a document, or an Error naming the operation.
//  * The field helpers never throw on a missing or mistyped field: they print "-", since a
//    newer or older daemon may differ in what it sends.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kcache/result.hpp"

namespace kcachectl {

using Json = nlohmann::json;

int fail(const kcache::Error& error);
int usage(std::string_view message);

kcache::Result<Json> parse_json(const std::string& text, std::string_view operation);

struct Context;
// A control operation the way every JSON verb runs one: connect (with `patience`, 0:
// libkcache's defaults), send `request` (null: none), parse the reply. Errors as values,
// for fail().
kcache::Result<Json> ask(const Context& ctx, const char* operation, const Json& request = nullptr,
                         std::chrono::milliseconds patience = std::chrono::milliseconds(0));
void print_json(const Json& document);

// j[key] if j is an object that has it, else null.
const Json& field(const Json& j, const char* key);
// A scalar as text: strings as common/text.hpp printable() shows them, numbers and booleans printed, anything else "-".
std::string text(const Json& j);
// A byte count as "1.5 GiB", "-" when not a number.
std::string size_text(const Json& j);
// Seconds as "3d 4h", "2h 5m", "4m 10s", "12s".
std::string duration_text(std::uint64_t seconds);
// A Unix time (seconds) as "5m ago"; 0 is "never"; "-" when not a number.
std::string age_text(const Json& unix_seconds);

// Prints rows as left-aligned columns two spaces apart, each line prefixed with `indent`.
void print_table(const std::vector<std::vector<std::string>>& rows, std::string_view indent = "");

// For a capped list in a reply: when doc[truncated] is true, prints "(N of TOTAL WHAT shown)"
// with N the length of doc[list].
void print_shown_of(const Json& doc, const char* list, const char* total, const char* truncated,
                    std::string_view what, std::string_view indent = "");

}  // namespace kcachectl

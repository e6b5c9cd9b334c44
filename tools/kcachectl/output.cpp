#include "output.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "common/text.hpp"
#include "common/units.hpp"
#include "verbs.hpp"

namespace kcachectl {

int fail(const kcache::Error& error) {
  std::cerr << "kcachectl: " << error.message << '\n';
  if (!error.log.empty()) {
    std::cerr << error.log;
    if (error.log.back() != '\n') std::cerr << '\n';
  }
  return 1;
}

int usage(std::string_view message) {
  std::cerr << "kcachectl: " << message << "\nRun 'kcachectl --help' for usage.\n";
  return 2;
}

kcache::Result<Json> parse_json(const std::string& text, std::string_view operation) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return kcache::make_error(
        kcache::Errc::protocol,
        "kcached sent an invalid JSON document for '" + std::string(operation) + "'");
  return doc;
}

kcache::Result<Json> ask(const Context& ctx, const char* operation, const Json& request,
                         std::chrono::milliseconds patience) {
  KC_TRY_ASSIGN(kcache::Client client, ctx.connect(patience));
  KC_TRY_ASSIGN(const std::string reply,
                client.control(operation, request.is_null() ? "{}" : request.dump()));
  return parse_json(reply, operation);
}

void print_json(const Json& document) {
  std::cout << document.dump(2) << '\n';
}

const Json& field(const Json& j, const char* key) {
  static const Json null_value;
  if (!j.is_object()) return null_value;
  const auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

std::string text(const Json& j) {
  // Terminal-safe: a control character in a name (a directory on the disk) is shown escaped.
  if (j.is_string()) return kcache::printable(j.get_ref<const std::string&>());
  if (j.is_boolean()) return j.get<bool>() ? "yes" : "no";
  if (j.is_number()) return j.dump();
  return "-";
}

std::string size_text(const Json& j) {
  if (!j.is_number_unsigned() && !j.is_number_integer()) return "-";
  const auto bytes = j.get<std::int64_t>();
  return bytes < 0 ? "-" : kcache::format_size(static_cast<std::uint64_t>(bytes));
}

std::string duration_text(std::uint64_t s) {
  const std::uint64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
  // Two units are enough for a human; more is noise.
  if (d > 0) return std::to_string(d) + "d " + std::to_string(h) + "h";
  if (h > 0) return std::to_string(h) + "h " + std::to_string(m) + "m";
  if (m > 0) return std::to_string(m) + "m " + std::to_string(sec) + "s";
  return std::to_string(sec) + "s";
}

std::string age_text(const Json& unix_seconds) {
  if (!unix_seconds.is_number()) return "-";
  const double then = unix_seconds.get<double>();
  if (then <= 0) return "never";
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // A clock that went backwards shows "0s ago" rather than a negative age.
  return duration_text(static_cast<std::uint64_t>(std::max(0.0, now - then))) + " ago";
}

void print_table(const std::vector<std::vector<std::string>>& rows, std::string_view indent) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 2, ' ');
    }
    std::cout << line << '\n';
  }
}

void print_shown_of(const Json& doc, const char* list, const char* total, const char* truncated,
                    std::string_view what, std::string_view indent) {
  const Json& cut = field(doc, truncated);
  if (!cut.is_boolean() || !cut.get<bool>()) return;
  const Json& items = field(doc, list);
  std::cout << indent << "(" << (items.is_array() ? items.size() : 0) << " of "
            << text(field(doc, total)) << " " << what << " shown)\n";
}

}  // namespace kcachectl

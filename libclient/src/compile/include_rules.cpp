#include "compile/include_rules.hpp"

#include <string>
#include <string_view>

#include "common/text.hpp"

namespace kcache {

namespace {

// Physical lines joined where a backslash ends them (translation phase 2), so that a
// directive cannot be split across lines to hide it.
std::string join_continued_lines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      std::size_t j = i + 1;
      if (j < text.size() && text[j] == '\r') ++j;
      if (j < text.size() && text[j] == '\n') {
        i = j;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

// Skips blanks and comments from `at`. A block comment is skipped whole wherever it ends (it
// counts as one space, so `#/*…*/include` is a directive); newlines only with `cross_lines`.
std::size_t skip_blanks(std::string_view t, std::size_t at, bool cross_lines) {
  while (at < t.size()) {
    const char c = t[at];
    if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r' || (cross_lines && c == '\n')) {
      ++at;
    } else if (t.substr(at, 2) == "/*") {
      const std::size_t end = t.find("*/", at + 2);
      at = end == std::string_view::npos ? t.size() : end + 2;
    } else {
      break;
    }
  }
  return at;
}

bool word_char(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

std::string_view read_word(std::string_view t, std::size_t* at) {
  const std::size_t start = *at;
  while (*at < t.size() && word_char(t[*at])) ++*at;
  return t.substr(start, *at - start);
}

// Why `path` (a literal include operand) may not be included; empty if it may.
std::string path_problem(std::string_view path) {
  if (path.empty()) return "an empty name";
  if (path.front() == '/') return "an absolute path";
  if (path.front() == '~') return "a path starting with '~'";
  if (path.find('\0') != std::string_view::npos) return "a NUL byte";
  for (std::size_t at = 0; at <= path.size();) {
    const std::size_t slash = std::min(path.find('/', at), path.size());
    if (path.substr(at, slash - at) == "..") return "a '..' component";
    at = slash + 1;
  }
  return {};
}

// The literal operand at `at` ("name" or <name>), or an error naming what is wrong.
Result<std::string_view> literal_operand(std::string_view t, std::size_t at) {
  if (at >= t.size() || (t[at] != '"' && t[at] != '<'))
    return make_error(Errc::invalid_argument, "its operand is not a literal \"name\" or <name> "
                                              "(a computed include could name any file)");
  const char close = t[at] == '"' ? '"' : '>';
  const std::size_t end = t.find_first_of(std::string{close, '\n'}, at + 1);
  if (end == std::string_view::npos || t[end] != close)
    return make_error(Errc::invalid_argument, "its operand is not terminated on its line");
  return t.substr(at + 1, end - at - 1);
}

Error refused(std::string_view file, std::string_view what, const std::string& why) {
  return make_error(Errc::invalid_argument,
                    printable(file) + ": '" + printable(what) + "' is not allowed: " + why +
                        "; headers come only from the request and the include roots");
}

// One directive starting at the `#` (or `%:`) at `at`.
Status check_directive(std::string_view file, std::string_view t, std::size_t at) {
  at = skip_blanks(t, at + (t[at] == '#' ? 1 : 2), false);
  const std::string_view name = read_word(t, &at);
  if (name == "pragma") {
    const std::size_t eol = std::min(t.find('\n', at), t.size());
    if (t.substr(at, eol - at).find("dependency") != std::string_view::npos)
      return refused(file, "#pragma ... dependency", "it probes a file on the daemon's disk");
    return {};
  }
  if (name != "include" && name != "include_next" && name != "import" && name != "embed") return {};
  auto operand = literal_operand(t, skip_blanks(t, at, false));
  if (!operand.ok()) return refused(file, "#" + std::string(name), operand.error().message);
  if (const std::string why = path_problem(*operand); !why.empty())
    return refused(file, "#" + std::string(name) + " " + std::string(*operand), "it names " + why);
  return {};
}

// `__has_include(…)`, `__has_include_next(…)`, `__has_embed(…)` and `_Pragma("… dependency …")`
// anywhere in the text: existence probes, so the same rule as an include.
Status check_probes(std::string_view file, std::string_view t) {
  for (const std::string_view probe : {"__has_include", "__has_embed"}) {
    for (std::size_t at = t.find(probe); at != std::string_view::npos; at = t.find(probe, at + 1)) {
      std::size_t p = at + probe.size();
      if (t.substr(p, 5) == "_next") p += 5;
      p = skip_blanks(t, p, true);
      if (p >= t.size() || t[p] != '(') continue;  // a longer identifier, or a bare mention
      auto operand = literal_operand(t, skip_blanks(t, p + 1, true));
      if (!operand.ok()) return refused(file, probe, operand.error().message);
      if (const std::string why = path_problem(*operand); !why.empty())
        return refused(file, std::string(probe) + "(" + std::string(*operand) + ")", "it names " + why);
    }
  }
  for (std::size_t at = t.find("_Pragma"); at != std::string_view::npos; at = t.find("_Pragma", at + 1)) {
    const std::size_t eol = std::min(t.find('\n', at), t.size());
    if (t.substr(at, eol - at).find("dependency") != std::string_view::npos)
      return refused(file, "_Pragma(\"... dependency ...\")", "it probes a file on the daemon's disk");
  }
  return {};
}

Status check_text(std::string_view file, std::string_view raw) {
  const std::string joined = join_continued_lines(raw);
  const std::string_view t = joined;
  // Every line is looked at, even one a real preprocessor sees inside a comment or a raw
  // string (conservative: a comment is never trusted to hide a line). A directive may start
  // at the line's start or right after a `*/` on it (a comment counts as a space), blanks and
  // comments skipped; a `#` or `%:` there opens it.
  for (std::size_t line = 0; line < t.size();) {
    const std::size_t eol = std::min(t.find('\n', line), t.size());
    for (std::size_t start = line; start != std::string_view::npos;) {
      const std::size_t at = skip_blanks(t, start, false);
      if (at < eol && (t[at] == '#' || t.substr(at, 2) == "%:"))
        if (auto ok = check_directive(file, t, at); !ok.ok()) return ok;
      const std::size_t close = t.substr(0, eol).find("*/", start);
      start = close == std::string_view::npos ? close : close + 2;
    }
    line = eol + 1;
  }
  return check_probes(file, t);
}

}  // namespace

Status check_include_directives(const wire::GetRequest& request) {
  for (const auto& h : request.headers) {
    if (const std::string why = path_problem(h.name); !why.empty())
      return make_error(Errc::invalid_argument,
                        "header name '" + printable(h.name) + "' is not allowed: it has " + why +
                            "; a request header's name is a relative path without '..'");
  }
  if (request.source)
    if (auto ok = check_text("source", *request.source); !ok.ok()) return ok;
  for (const auto& h : request.headers)
    if (auto ok = check_text("header '" + h.name + "'", h.data); !ok.ok()) return ok;
  return {};
}

}  // namespace kcache

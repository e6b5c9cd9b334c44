// kcachectl ls — the cache entries (the daemon's `list` reply) as a table or JSON.
#include <iostream>

#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

constexpr std::size_t kKeyShown = 12;  // like git's short hashes: unique enough to read

struct LsArgs {
  std::string name;
  std::optional<int> limit;
} args;

}  // namespace

void setup_ls(Options& o) {
  o.add("--name", args.name, "Only the entries of this module name");
  o.add("--limit", args.limit, "At most this many entries");
}

int run_ls(const Context& ctx) {
  if (args.limit && *args.limit <= 0)
    return usage("--limit expects a positive count, got " + std::to_string(*args.limit));
  Json request = Json::object();
  if (!args.name.empty()) request["name"] = args.name;
  if (args.limit) request["limit"] = *args.limit;

  auto doc = ask(ctx, "list", request);
  if (!doc.ok()) return fail(doc.error());
  if (ctx.json) {
    print_json(*doc);
    return kExitOk;
  }
  const Json& entries = field(*doc, "entries");
  if (!entries.is_array() || entries.empty()) {
    std::cout << "no cache entries\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows{
      {"KEY", "NAME", "TARGET", "ORIGIN", "SIZE", "LAST-SERVED", "SERVED"}};
  for (const Json& e : entries) {
    std::string key = text(field(e, "key"));
    if (key.size() > kKeyShown) key.resize(kKeyShown);
    rows.push_back({key, text(field(e, "name")), text(field(e, "target")), text(field(e, "origin")),
                    size_text(field(e, "size")), age_text(field(e, "last_served")),
                    text(field(e, "serve_count"))});
  }
  print_table(rows);
  print_shown_of(*doc, "entries", "total", "truncated", "entries");
  return kExitOk;
}

}  // namespace kcachectl

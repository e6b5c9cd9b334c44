// kcachectl get — resolves, serves or compiles one module through libkcache; prints its path.
#include <fcntl.h>

#include <iostream>

#include "common/fd.hpp"
#include "output.hpp"
#include "verbs.hpp"

namespace kcachectl {

namespace {

struct GetArgs {
  std::string name;
  std::string source;
  std::vector<std::string> headers;  // NAME=FILE
  std::vector<std::string> options;
  std::string target;
  std::optional<int> device;
  std::string version;
} args;

kcache::Result<std::string> read_file(const std::string& path, const std::string& what) {
  const kcache::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return kcache::errno_error(kcache::Errc::io, "cannot read " + what + " '" + path + "'");
  auto bytes = kcache::read_whole_file(fd.get());
  if (!bytes.ok())
    return kcache::make_error(kcache::Errc::io,
                              "cannot read " + what + " '" + path + "': " + bytes.error().message);
  return bytes;
}

struct NamedFile {
  std::string name;
  std::string data;
};

}  // namespace

void setup_get(Options& o) {
  o.add_required("--name", args.name, "Module name");
  o.add("--source", args.source, "File with the module source (compiled on a miss)");
  o.add_repeated("--header", args.headers, "NAME=FILE: a header the source #includes as NAME");
  o.add_repeated("--option", args.options, "A compiler option, in order (may start with '-')");
  o.add("--target", args.target, "Explicit target, e.g. sm_90a or gfx942");
  o.add("--device", args.device, "Local device index (instead of --target)");
  o.add("--version", args.version, "Consumer's full version, e.g. 0.6.18+cu130 (providers)");
  o.exclusive("--target", "--device");
}

int run_get(const Context& ctx) {
  // Read and check every input before talking to the daemon.
  std::string source;
  if (!args.source.empty()) {
    auto bytes = read_file(args.source, "source");
    if (!bytes.ok()) return fail(bytes.error());
    source = std::move(bytes).value();
  }
  std::vector<NamedFile> files;
  for (const std::string& spec : args.headers) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return usage("--header expects NAME=FILE, got '" + spec + "'");
    auto bytes = read_file(spec.substr(eq + 1), "header");
    if (!bytes.ok()) return fail(bytes.error());
    files.push_back({spec.substr(0, eq), std::move(bytes).value()});
  }
  if (args.device && *args.device < 0)
    return usage("--device expects a device index, got " + std::to_string(*args.device));

  std::vector<kcache::Header> headers;
  for (const NamedFile& f : files) headers.push_back({f.name, f.data});
  const std::vector<std::string_view> options(args.options.begin(), args.options.end());
  kcache::Request request;
  request.name = args.name;
  request.version = args.version;
  request.target = args.target;
  request.device = args.device;
  request.source = source;
  request.headers = headers;
  request.options = options;

  auto client = ctx.connect();
  if (!client.ok()) return fail(client.error());
  auto module = client->get(request);
  if (!module.ok()) return fail(module.error());
  if (ctx.json) {
    print_json(Json{{"path", module->path},
                    {"size", module->size},
                    {"digest", module->digest},
                    {"origin", kcache::origin_name(module->origin)},
                    {"target", module->target},
                    {"key", module->key}});
  } else {
    std::cout << module->path << '\n';
  }
  return kExitOk;
}

}  // namespace kcachectl

// kcachectl get — resolves, serves or compiles one module through libkcache; prints its path.
#include <fcntl.h>

#include <iostream>

#include "common/fd.hpp"
#include "variant/system.hpp"
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
  std::string revision;
  std::string system;
} args;

// --system's key=value,… spec as the request's JSON object: checked here first with the
// rules the daemon applies (variant/system.hpp), so a typo is named before anything is sent.
kcache::Result<std::string> system_json_of(const std::string& spec) {
  KC_TRY(kcache::parse_system_spec(spec));
  Json doc = Json::object();
  std::size_t start = 0;
  while (start < spec.size()) {
    const std::size_t end = std::min(spec.find(',', start), spec.size());
    const std::string pair = spec.substr(start, end - start);
    const std::size_t eq = pair.find('=');
    doc[pair.substr(0, eq)] = pair.substr(eq + 1);
    start = end + 1;
  }
  return doc.dump();
}

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
  o.add("--revision", args.revision,
        "kernels repos: a ref (main, v1) or commit of the repo --name names (default: main)");
  o.add("--system", args.system,
        "The worker's system, e.g. torch=2.14,cxx=cxx11,backend=cuda-13.0,python=gil,cpu=x86_64,"
        "os=linux (as `variant resolve --system`): picks a build variant");
  o.exclusive("--target", "--device");
  o.exclusive("--version", "--revision");
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
  std::string system_json;
  if (!args.system.empty()) {
    auto json = system_json_of(args.system);
    if (!json.ok()) return usage("--system: " + json.error().message);
    system_json = std::move(json).value();
  }
  kcache::Request request;
  request.name = args.name;
  request.version = args.revision.empty() ? args.version : args.revision;
  request.system_json = system_json;
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
                    {"key", module->key},
                    {"is_directory", module->is_directory}});
  } else {
    std::cout << module->path << '\n';
  }
  return kExitOk;
}

}  // namespace kcachectl

// kcache-synth-cache: writes a synthetic cache directory for scale benchmarks (docs/benchmarks.md).
//
//   kcache-synth-cache --cache-dir DIR --entries N [--objects K] [--object-size BYTES]
//
// Creates K distinct objects (default N; entry i uses object i % K) of BYTES random-looking
// bytes under DIR/objects/ and N index rows, with last-serve times spread over the past 30
// days, through the daemon's own Store layout and Index schema. kcached must not be running
// on DIR. Files are written without fsync (synthetic data; the daemon's publish path fsyncs).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "index/index.hpp"
#include "store/store.hpp"

using namespace kcache;
using namespace kcache::daemon;

int main(int argc, char** argv) {
  std::string dir;
  std::uint64_t entries = 0, objects = 0, object_size = 4000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--cache-dir") dir = argv[i + 1];
    else if (a == "--entries") entries = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--objects") objects = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--object-size") object_size = std::strtoull(argv[i + 1], nullptr, 10);
  }
  if (dir.empty() || entries == 0) {
    std::fprintf(stderr, "usage: %s --cache-dir DIR --entries N [--objects K] [--object-size B]\n", argv[0]);
    return 2;
  }
  if (objects == 0 || objects > entries) objects = entries;
  ::mkdir(dir.c_str(), 0755);
  auto store = Store::open(dir);
  auto index = Index::open(dir + "/index.sqlite");
  if (!store.ok() || !index.ok()) {
    std::fprintf(stderr, "%s\n", (!store.ok() ? store.error() : index.error()).message.c_str());
    return 1;
  }
  std::mt19937_64 rng(42);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Digest128> digests;
  digests.reserve(objects);
  std::string bytes(object_size, '\0');
  for (std::uint64_t o = 0; o < objects; ++o) {
    for (std::size_t b = 0; b + 8 <= bytes.size(); b += 8) {
      const std::uint64_t r = rng();
      std::memcpy(bytes.data() + b, &r, 8);
    }
    const Digest128 d = digest_of(bytes);
    const std::string path = store->object_path(d, ObjectKind::cubin);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
    if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
      std::perror(path.c_str());
      return 1;
    }
    ::close(fd);
    digests.push_back(d);
  }
  const auto t1 = std::chrono::steady_clock::now();
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch()).count();
  IndexBatch batch;
  for (std::uint64_t i = 0; i < entries; ++i) {
    EntryRow r;
    r.key = digest_of(std::string_view("synthetic-key-" + std::to_string(i)));
    r.digest = digests[i % objects];
    r.size = object_size;
    r.disk_size = (object_size + 4095) / 4096 * 4096;
    r.kind = ObjectKind::cubin;
    r.target = i % 3 == 0 ? "sm_90a" : (i % 3 == 1 ? "sm_100a" : "gfx942");
    r.origin = i % 5 == 0 ? EntryOrigin::provider : EntryOrigin::compiled;
    r.name = "synthetic_module_" + std::to_string(i);
    r.last_served = now_ms - static_cast<std::int64_t>(rng() % (30ull * 86'400'000));
    r.created = r.last_served - 1000;
    r.serve_count = rng() % 1000;
    batch.upserts.push_back(std::move(r));
    if (batch.upserts.size() == 50'000 || i + 1 == entries) {
      if (auto st = index->apply(batch); !st.ok()) {
        std::fprintf(stderr, "%s\n", st.error().message.c_str());
        return 1;
      }
      batch = IndexBatch{};
    }
  }
  const auto t2 = std::chrono::steady_clock::now();
  std::printf("wrote %llu objects in %.1f s and %llu index rows in %.1f s under %s\n",
              static_cast<unsigned long long>(objects), std::chrono::duration<double>(t1 - t0).count(),
              static_cast<unsigned long long>(entries), std::chrono::duration<double>(t2 - t1).count(),
              dir.c_str());
  return 0;
}

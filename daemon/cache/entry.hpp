// entry.hpp — what the daemon knows about one cache entry (a key and the object it names).
//
// Timestamps are unix milliseconds. Contract: `Entry` is the compact in-memory form (no name: names live in the SQLite index
// only, which keeps a million entries well under the RSS budget). `EntryRow` is the full
// persistent row. Object files are named <digest>.<extension of kind>.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/digest.hpp"

namespace kcache::daemon {

// cubin and hsaco: device binaries; so: a host shared object with device code embedded;
// tree: a directory (a kernels build variant, store/tree_store.hpp); blob: one file of trees,
// never an entry of its own (its trees' hard links keep it).
enum class ObjectKind : std::uint8_t { cubin, hsaco, so, tree, blob };
enum class EntryOrigin : std::uint8_t { compiled, provider };

constexpr const char* kind_extension(ObjectKind k) noexcept {
  switch (k) {
    case ObjectKind::cubin: return "cubin";
    case ObjectKind::hsaco: return "hsaco";
    case ObjectKind::so: return "so";
    case ObjectKind::tree: return "tree";
    case ObjectKind::blob: return "blob";
  }
  return "?";
}
std::optional<ObjectKind> parse_kind(std::string_view s) noexcept;
// cuda → cubin, hip → hsaco.
std::optional<ObjectKind> kind_for_backend(std::string_view backend) noexcept;

constexpr const char* entry_origin_name(EntryOrigin o) noexcept {
  return o == EntryOrigin::compiled ? "compiled" : "provider";
}
std::optional<EntryOrigin> parse_entry_origin(std::string_view s) noexcept;

struct Entry {
  Digest128 digest;
  std::uint64_t size = 0;         // apparent bytes
  std::uint64_t disk_size = 0;    // allocated bytes (st_blocks * 512): what budgets count
  std::int64_t created = 0;       // unix milliseconds
  std::int64_t last_served = 0;   // unix milliseconds
  // Which file the object is (Store::fingerprint: device, inode, size, times), taken when it was
  // published or first served after a start; 0 until known. A hit whose file no longer has
  // it is not served (Cache::still_published).
  std::uint64_t file_stamp = 0;
  std::uint32_t serve_count = 0;
  std::uint16_t target_id = 0;   // interned target string (Catalog::target_name)
  ObjectKind kind = ObjectKind::cubin;
  EntryOrigin origin = EntryOrigin::compiled;
};

struct EntryRow {
  Digest128 key;
  Digest128 digest;
  std::uint64_t size = 0;
  std::uint64_t disk_size = 0;
  ObjectKind kind = ObjectKind::cubin;
  std::string target;
  EntryOrigin origin = EntryOrigin::compiled;
  std::string name;
  std::int64_t created = 0;
  std::int64_t last_served = 0;
  std::uint64_t serve_count = 0;
};

}  // namespace kcache::daemon

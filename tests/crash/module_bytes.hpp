// module_bytes.hpp — reading a module back and hashing it like the daemon promises
// (XXH3-128 of the bytes, canonical hex: the same 32 digits as `xxhsum -H2`).
#pragma once

#include <string>
#include <string_view>

namespace kcache::crash {

std::string xxh128_hex(std::string_view bytes);

struct ReadResult {
  std::string bytes;
  int error = 0;  // errno of the failed open/read; 0 on success
};

// Reads from offset 0 to EOF with pread (the fd's offset is left alone).
ReadResult read_fd(int fd);
// Opens read-only without following a symlink, then reads it whole.
ReadResult read_path(const std::string& path);

}  // namespace kcache::crash

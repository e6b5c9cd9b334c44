// digest.hpp — XXH3-128 digests: the identity of cache keys and of module contents.
//
// Contract:
//  * `Digest128` is 16 bytes; `hex()` is 32 lowercase hex digits in XXH3's canonical
//    (big-endian, high half first) order — exactly what `xxhsum -H2` prints.
//  * `parse_digest_hex` accepts exactly that form (upper or lower case) and nothing else.
//  * `Hasher` is a streaming XXH3-128 state for inputs that arrive in pieces.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kcache/result.hpp"

namespace kcache {

struct Digest128 {
  std::uint64_t high = 0;
  std::uint64_t low = 0;

  friend bool operator==(const Digest128&, const Digest128&) = default;
  friend auto operator<=>(const Digest128&, const Digest128&) = default;

  std::string hex() const;
  // Writes 32 hex digits to out (no terminator).
  void hex_to(char* out) const noexcept;
  // The canonical 16 bytes (big-endian, high first).
  std::array<std::uint8_t, 16> bytes() const noexcept;
  static Digest128 from_bytes(std::span<const std::uint8_t, 16> canonical) noexcept;
};

struct Digest128Hash {
  std::size_t operator()(const Digest128& d) const noexcept {
    // The digest is already uniformly distributed: its low half is a fine hash.
    return static_cast<std::size_t>(d.low ^ (d.high * 0x9E3779B97F4A7C15ull));
  }
};

Digest128 digest_of(std::span<const std::byte> data) noexcept;
Digest128 digest_of(std::string_view data) noexcept;

Result<Digest128> parse_digest_hex(std::string_view text);

class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(Hasher&&) noexcept;
  Hasher& operator=(Hasher&&) noexcept;
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void update(const void* data, std::size_t size) noexcept;
  void update(std::string_view data) noexcept { update(data.data(), data.size()); }
  Digest128 finish() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kcache

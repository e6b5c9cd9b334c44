#include "common/digest.hpp"

#include <xxhash.h>

#include <cstdlib>

namespace kcache {

namespace {
constexpr char kHexDigits[] = "0123456789abcdef";

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Digest128 from_xxh(XXH128_hash_t h) noexcept { return Digest128{h.high64, h.low64}; }
}  // namespace

void Digest128::hex_to(char* out) const noexcept {
  for (int i = 0; i < 16; ++i) out[i] = kHexDigits[(high >> (60 - 4 * i)) & 0xf];
  for (int i = 0; i < 16; ++i) out[16 + i] = kHexDigits[(low >> (60 - 4 * i)) & 0xf];
}

std::string Digest128::hex() const {
  std::string s(32, '0');
  hex_to(s.data());
  return s;
}

std::array<std::uint8_t, 16> Digest128::bytes() const noexcept {
  std::array<std::uint8_t, 16> out{};
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<std::uint8_t>(high >> (56 - 8 * i));
    out[8 + i] = static_cast<std::uint8_t>(low >> (56 - 8 * i));
  }
  return out;
}

Digest128 Digest128::from_bytes(std::span<const std::uint8_t, 16> b) noexcept {
  Digest128 d;
  for (int i = 0; i < 8; ++i) {
    d.high = (d.high << 8) | b[i];
    d.low = (d.low << 8) | b[8 + i];
  }
  return d;
}

Digest128 digest_of(std::span<const std::byte> data) noexcept {
  return from_xxh(XXH3_128bits(data.data(), data.size()));
}

Digest128 digest_of(std::string_view data) noexcept {
  return from_xxh(XXH3_128bits(data.data(), data.size()));
}

Result<Digest128> parse_digest_hex(std::string_view text) {
  if (text.size() != 32)
    return make_error(Errc::invalid_argument,
                      "digest '" + std::string(text) + "' is not 32 hex digits");
  Digest128 d;
  for (std::size_t i = 0; i < 32; ++i) {
    const int v = hex_value(text[i]);
    if (v < 0)
      return make_error(Errc::invalid_argument,
                        "digest '" + std::string(text) + "' has a non-hex character");
    std::uint64_t& half = i < 16 ? d.high : d.low;
    half = (half << 4) | static_cast<std::uint64_t>(v);
  }
  return d;
}

struct Hasher::State {
  XXH3_state_t* st = nullptr;
  State() : st(XXH3_createState()) {
    if (st == nullptr) std::abort();  // out of memory: nothing sensible to do
    XXH3_128bits_reset(st);
  }
  ~State() { XXH3_freeState(st); }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

Hasher::Hasher() : state_(std::make_unique<State>()) {}
Hasher::~Hasher() = default;
Hasher::Hasher(Hasher&&) noexcept = default;
Hasher& Hasher::operator=(Hasher&&) noexcept = default;

void Hasher::update(const void* data, std::size_t size) noexcept {
  XXH3_128bits_update(state_->st, data, size);
}

Digest128 Hasher::finish() const noexcept { return from_xxh(XXH3_128bits_digest(state_->st)); }

}  // namespace kcache

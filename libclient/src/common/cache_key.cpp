#include "common/cache_key.hpp"

#include <algorithm>
#include <cstdint>

namespace kcache {

namespace {
void put_u64(Hasher& h, std::uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  h.update(b, sizeof b);
}
void put_str(Hasher& h, std::string_view s) {
  put_u64(h, s.size());
  h.update(s);
}
}  // namespace

Digest128 compute_cache_key(const KeyInput& in) {
  Hasher h;
  put_str(h, kKeyFormat);
  put_str(h, in.backend);
  put_str(h, in.target);
  put_str(h, in.compiler);
  put_u64(h, in.options.size());
  for (std::string_view o : in.options) put_str(h, o);
  put_str(h, in.name);
  put_str(h, in.source);
  std::vector<KeyHeader> headers = in.headers;
  // Sorting by name, then bytes, keeps the key independent of the order headers arrived in.
  std::sort(headers.begin(), headers.end(), [](const KeyHeader& a, const KeyHeader& b) {
    return a.name != b.name ? a.name < b.name : a.data < b.data;
  });
  put_u64(h, headers.size());
  for (const KeyHeader& hd : headers) {
    put_str(h, hd.name);
    put_str(h, hd.data);
  }
  return h.finish();
}

}  // namespace kcache

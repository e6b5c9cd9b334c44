#include "providers/provider_key.hpp"

#include <cstdint>

namespace kcache::providers {

namespace {
void put_str(Hasher& h, std::string_view s) {
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(std::uint64_t{s.size()} >> (8 * i));
  h.update(len, sizeof len);
  h.update(s);
}
}  // namespace

Digest128 compute_provider_key(const ProviderKeyInput& in) {
  Hasher h;
  put_str(h, kProviderKeyFormat);
  put_str(h, in.provider);
  put_str(h, in.package);
  put_str(h, in.version);
  put_str(h, in.variant);
  put_str(h, in.module);
  put_str(h, in.target);
  put_str(h, in.digest.hex());
  return h.finish();
}

}  // namespace kcache::providers

// SHA-2 through OpenSSL's EVP interface (sha2.hpp).
#include "providers/sha2.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "common/fd.hpp"

namespace kcache::providers {

namespace {

constexpr std::size_t kChunk = 128 * 1024;

struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

const EVP_MD* md_of(ShaAlgorithm a) { return a == ShaAlgorithm::sha256 ? EVP_sha256() : EVP_sha512(); }

Result<MdCtx> start(ShaAlgorithm a) {
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), md_of(a), nullptr) != 1)
    return make_error(Errc::internal, "libcrypto: cannot start " + std::string(sha_algorithm_name(a)));
  return ctx;
}

Result<std::string> finish(EVP_MD_CTX* ctx) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx, out, &n) != 1) return make_error(Errc::internal, "libcrypto: digest failed");
  return base64_standard(std::span<const unsigned char>(out, n));
}

}  // namespace

std::optional<ShaAlgorithm> parse_sha_algorithm(std::string_view name) noexcept {
  if (name == "sha256") return ShaAlgorithm::sha256;
  if (name == "sha512") return ShaAlgorithm::sha512;
  return std::nullopt;
}

std::string_view sha_algorithm_name(ShaAlgorithm a) noexcept {
  return a == ShaAlgorithm::sha256 ? "sha256" : "sha512";
}

std::string base64_standard(std::span<const unsigned char> bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

Result<std::string> sha_base64_of_bytes(std::string_view bytes, ShaAlgorithm algorithm) {
  KC_TRY_ASSIGN(MdCtx ctx, start(algorithm));
  if (EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1)
    return make_error(Errc::internal, "libcrypto: digest failed");
  return finish(ctx.get());
}

Result<std::string> sha_base64_of_fd(int fd, ShaAlgorithm algorithm) {
  KC_TRY_ASSIGN(MdCtx ctx, start(algorithm));
  thread_local std::string chunk(kChunk, '\0');
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, chunk.data(), chunk.size(), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error(Errc::io, "read");
    if (n == 0) break;
    if (EVP_DigestUpdate(ctx.get(), chunk.data(), static_cast<std::size_t>(n)) != 1)
      return make_error(Errc::internal, "libcrypto: digest failed");
    at += n;
  }
  return finish(ctx.get());
}

}  // namespace kcache::providers

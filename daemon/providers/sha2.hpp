// providers/sha2.hpp — SHA-256 / SHA-512 of files, with OpenSSL's libcrypto (never a
// hand-written SHA-2), and the standard base64 `kernels` digests are written in.
//
// Contract (pure, any thread):
//  * `parse_sha_algorithm` accepts "sha256" and "sha512" (kernels' `algorithm` values).
//  * `sha_base64_of_fd(fd, algorithm)` reads the open file from offset 0 to its end in 128 KiB
//    chunks and returns the digest as standard, padded base64 (`+/`, `=`): sha256 of
//    "hello world" is "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=". Errc::io on a read error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kcache/result.hpp"

namespace kcache::providers {

enum class ShaAlgorithm : std::uint8_t { sha256, sha512 };

std::optional<ShaAlgorithm> parse_sha_algorithm(std::string_view name) noexcept;
std::string_view sha_algorithm_name(ShaAlgorithm a) noexcept;  // "sha256" / "sha512"

std::string base64_standard(std::span<const unsigned char> bytes);
Result<std::string> sha_base64_of_bytes(std::string_view bytes, ShaAlgorithm algorithm);
Result<std::string> sha_base64_of_fd(int fd, ShaAlgorithm algorithm);

}  // namespace kcache::providers

// One module: confined open, bounded read, bounded decompression, digest, ELF inspection.
#include "providers/module_check.hpp"

#include <unistd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <span>

#include "arch/binary_check.hpp"
#include "arch/elf_inspect.hpp"
#include "arch/host_object.hpp"
#include "providers/sha2.hpp"

namespace kcache::providers {

namespace {

// ZSTD_FRAMEHEADERSIZE_MAX, which zstd.h only exposes to static-linking users.
constexpr std::size_t kMaxFrameHeader = 18;
// Decompression and reading go through chunks of this size (fits the L2 cache).
constexpr std::size_t kChunk = 128 * 1024;

Error corrupt(const ModuleSpec& m, const std::string& why) {
  return make_error(Errc::corrupt, "module " + describe_module(m) + ": " + why);
}

// The largest file a zstd encoding of `size` bytes can be (a larger one is not what it claims).
std::uint64_t max_encoded(const ModuleSpec& m) {
  return m.compression == Compression::zstd ? ZSTD_compressBound(m.size) : m.size;
}

Status check_sizes(const ModuleSpec& m, const struct stat& st) {
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  if (m.compression == Compression::none && file_size != m.size)
    return corrupt(m, "file is " + std::to_string(file_size) + " bytes, the manifest declares " +
                          std::to_string(m.size));
  if (file_size > max_encoded(m))
    return corrupt(m, "compressed file (" + std::to_string(file_size) +
                          " bytes) is larger than any zstd encoding of the declared " +
                          std::to_string(m.size) + " bytes");
  return {};
}

// A zstd frame header that promises more than the declared size is refused before decoding.
Status check_frame_header(const ModuleSpec& m, const void* data, std::size_t size) {
  const unsigned long long content = ZSTD_getFrameContentSize(data, size);
  if (content == ZSTD_CONTENTSIZE_ERROR) return corrupt(m, "not a zstd frame");
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content > m.size)
    return corrupt(m, "zstd frame declares " + std::to_string(content) +
                          " bytes, more than the declared size " + std::to_string(m.size) +
                          " (refused: decompression bomb)");
  return {};
}

// Where module bytes go: each chunk is hashed while it is still in cache and appended to the
// result, so the bytes cross memory once (no zero-filled buffer, no second hashing pass) and
// never beyond the declared size.
class Sink {
 public:
  explicit Sink(const ModuleSpec& m) : m_(m) { bytes_.reserve(static_cast<std::size_t>(m.size)); }

  Status add(const char* data, std::size_t n) {
    if (n > m_.size - bytes_.size())
      return corrupt(m_, m_.compression == Compression::zstd
                             ? "decompresses to more than the declared " + std::to_string(m_.size) +
                                   " bytes (refused: decompression bomb)"
                             : "file grew past the declared " + std::to_string(m_.size) + " bytes");
    hasher_.update(data, n);
    bytes_.append(data, n);
    return {};
  }

  Result<std::string> finish() {
    if (bytes_.size() != m_.size)
      return corrupt(m_, (m_.compression == Compression::zstd ? "decompresses to " : "file is ") +
                             std::to_string(bytes_.size()) + " bytes, the manifest declares " +
                             std::to_string(m_.size));
    const Digest128 digest = hasher_.finish();
    if (!m_.digest_is_identity && digest != m_.digest)
      return corrupt(m_, "digest mismatch: the bytes hash to " + digest.hex() +
                             ", the manifest says " + m_.digest.hex());
    return std::move(bytes_);
  }

 private:
  const ModuleSpec& m_;
  std::string bytes_;
  Hasher hasher_;
};

// Per-thread chunk buffers small enough to stay in the CPU cache, reused across modules: the
// compressed file is read a chunk at a time into `input`, never into a buffer of its own size
// (no zero-fill, no fresh pages to fault in), and decoded a chunk at a time into `output`.
struct Scratch {
  std::string input = std::string(kChunk, '\0');
  std::string output = std::string(kChunk, '\0');
};
Scratch& scratch_buffers() {
  thread_local Scratch scratch;
  return scratch;
}

// pread of up to `n` bytes at `at`, retried on EINTR; 0 bytes is a file that shrank.
Result<std::size_t> read_chunk(int fd, char* into, std::size_t n, std::size_t at,
                               const ModuleSpec& m) {
  while (true) {
    const ssize_t got = ::pread(fd, into, n, static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno_error(Errc::io, "read " + m.file);
    if (got == 0) return corrupt(m, "file shrank while being read");
    return static_cast<std::size_t>(got);
  }
}

// Every frame of the file's `file_size` bytes through the sink, a chunk in and a chunk out at
// a time; the sink refuses output past the declared size, so a bomb is stopped after one chunk.
Status decompress(const ModuleSpec& m, int fd, std::size_t file_size, ZstdDCtx& dctx,
                  Sink& sink) {
  ZSTD_DCtx_reset(dctx.get(), ZSTD_reset_session_only);
  Scratch& scratch = scratch_buffers();
  std::size_t pending = 1;  // ZSTD_decompressStream's "not done" hint; 0 at a frame's end
  for (std::size_t at = 0; at < file_size;) {
    KC_TRY_ASSIGN(const std::size_t n, read_chunk(fd, scratch.input.data(),
                                                  std::min(kChunk, file_size - at), at, m));
    if (at == 0) KC_TRY(check_frame_header(m, scratch.input.data(), n));
    at += n;
    ZSTD_inBuffer in{scratch.input.data(), n, 0};
    // Until the chunk is consumed and the decoder has nothing more to flush for it.
    for (bool full = true; in.pos < in.size || full;) {
      ZSTD_outBuffer out{scratch.output.data(), scratch.output.size(), 0};
      pending = ZSTD_decompressStream(dctx.get(), &out, &in);
      if (ZSTD_isError(pending)) return corrupt(m, std::string("zstd: ") + ZSTD_getErrorName(pending));
      KC_TRY(sink.add(scratch.output.data(), out.pos));
      full = out.pos == out.size;
    }
  }
  // A frame unfinished at the end of the file: the file is cut short.
  if (pending != 0) return corrupt(m, "zstd stream is truncated");
  return {};
}

// A module without a published digest is served only from the file scanned: one rewritten
// since (a `pip install -U` under way) is not_found, so the caller rescans instead of
// refusing the module for good.
Status check_unchanged(const ModuleSpec& m, const struct stat& st) {
  if (!m.digest_is_identity || file_identity(st) == m.digest) return {};
  return make_error(Errc::not_found, "module " + describe_module(m) +
                                         ": the file changed since it was scanned");
}

// The bytes are the wheel's: the sha256 its RECORD lists for the file.
Status check_record(const ModuleSpec& m, const std::string& bytes) {
  if (m.record_sha256.empty()) return {};
  KC_TRY_ASSIGN(const std::string got, sha_base64_of_bytes(bytes, ShaAlgorithm::sha256));
  if (got != m.record_sha256)
    return corrupt(m, "sha256 " + got + " differs from the wheel's RECORD (" + m.record_sha256 + ")");
  return {};
}

Status check_binary(const ModuleSpec& m, std::span<const std::byte> bytes) {
  const Status checked =
      m.format == ModuleFormat::host_object
          ? check_host_object_matches(bytes, m.target, m.provided, /*allow_ptx=*/false)
          : check_binary_matches(bytes, m.target);
  if (!checked.ok()) return corrupt(m, checked.error().message);
  return {};
}

}  // namespace

std::string describe_module(const ModuleSpec& m) {
  return "'" + m.name + "' (" + m.target.str() + ", file " + m.file + ")";
}

Status check_module_file(const ProviderDir& dir, const ModuleSpec& m, struct stat* st) {
  auto opened = dir.open_file(m.file);
  if (!opened.ok()) {
    if (opened.error().code == Errc::io) return std::move(opened).error();
    return make_error(opened.error().code,
                      "module " + describe_module(m) + ": " + opened.error().message);
  }
  if (m.compression == Compression::zstd) {
    // The header first: a bomb is named as such rather than as an oversized file.
    char header[kMaxFrameHeader];
    const ssize_t n = ::pread(opened->fd.get(), header, sizeof header, 0);
    if (n < 0) return errno_error(Errc::io, "read " + m.file);
    KC_TRY(check_frame_header(m, header, static_cast<std::size_t>(n)));
  }
  KC_TRY(check_sizes(m, opened->st));
  if (st != nullptr) *st = opened->st;
  return {};
}

Result<std::string> materialize_module(const ProviderDir& dir, const ModuleSpec& m,
                                       ZstdDCtx& dctx) {
  auto opened = dir.open_file(m.file);
  if (!opened.ok()) {
    if (opened.error().code == Errc::io) return std::move(opened).error();
    return make_error(opened.error().code,
                      "module " + describe_module(m) + ": " + opened.error().message);
  }
  KC_TRY(check_unchanged(m, opened->st));
  KC_TRY(check_sizes(m, opened->st));
  const int fd = opened->fd.get();
  const auto file_size = static_cast<std::size_t>(opened->st.st_size);
  Sink sink(m);
  if (m.compression == Compression::none) {
    std::string& chunk = scratch_buffers().input;
    for (std::size_t at = 0; at < file_size;) {
      KC_TRY_ASSIGN(const std::size_t n,
                    read_chunk(fd, chunk.data(), std::min(kChunk, file_size - at), at, m));
      KC_TRY(sink.add(chunk.data(), n));
      at += n;
    }
  } else {
    KC_TRY(decompress(m, fd, file_size, dctx, sink));
  }
  KC_TRY_ASSIGN(std::string bytes, sink.finish());
  if (m.digest_is_identity) {
    struct stat after {};
    if (::fstat(fd, &after) != 0) return errno_error(Errc::io, "fstat " + m.file);
    KC_TRY(check_unchanged(m, after));  // the bytes read are the file that was scanned
  }
  KC_TRY(check_record(m, bytes));
  KC_TRY(check_binary(m, std::as_bytes(std::span(bytes.data(), bytes.size()))));
  return bytes;
}

}  // namespace kcache::providers

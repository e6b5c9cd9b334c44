// wire/byte_buffer.hpp — a receive buffer that grows without copying what it holds.
//
// Contract:
//  * Backed by an anonymous private mapping; growing it is mremap(MREMAP_MAYMOVE), which moves
//    page-table entries, not bytes. So a 64 MiB frame arriving in 64 KiB reads costs one copy of
//    each byte (the kernel's, into the buffer) and no pause that grows with the frame: the
//    doubling copies of a std::string stalled a daemon thread for tens of milliseconds.
//  * Resident memory follows the bytes written: untouched pages of the mapping are not backed.
//  * reserve() reports failure (ENOMEM, a mapping limit) as an error value; the buffer keeps its
//    bytes and stays usable. Move-only; the mapping is released by the destructor or release().
//  * Linux only (mremap).
#pragma once

#include <cstddef>

#include "kcache/result.hpp"

namespace kcache::wire {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ~ByteBuffer();
  ByteBuffer(ByteBuffer&& other) noexcept;
  ByteBuffer& operator=(ByteBuffer&& other) noexcept;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;

  // Makes capacity() at least `bytes` (rounded up to pages, at least doubling), keeping the
  // contents.
  Status reserve(std::size_t bytes);
  // Gives the mapping back; capacity() becomes 0.
  void release() noexcept;

  char* data() noexcept { return data_; }
  const char* data() const noexcept { return data_; }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  char* data_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace kcache::wire

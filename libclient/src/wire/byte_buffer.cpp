#include "wire/byte_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

namespace kcache::wire {

namespace {
std::size_t page_size() noexcept {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}
}  // namespace

ByteBuffer::~ByteBuffer() { release(); }

ByteBuffer::ByteBuffer(ByteBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

ByteBuffer& ByteBuffer::operator=(ByteBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

Status ByteBuffer::reserve(std::size_t bytes) {
  if (bytes <= capacity_) return {};
  const std::size_t page = page_size();
  std::size_t wanted = std::max(bytes, 2 * capacity_);
  if (wanted > (SIZE_MAX - page)) return make_error(Errc::too_large, "buffer size overflows");
  wanted = (wanted + page - 1) / page * page;
  void* mapped = data_ == nullptr
                     ? ::mmap(nullptr, wanted, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                     : ::mremap(data_, capacity_, wanted, MREMAP_MAYMOVE);
  if (mapped == MAP_FAILED) {
    const int err = errno;
    return make_error(Errc::io, "cannot map a receive buffer of " + std::to_string(wanted) +
                                          " bytes: " + std::strerror(err));
  }
  data_ = static_cast<char*>(mapped);
  capacity_ = wanted;
  return {};
}

void ByteBuffer::release() noexcept {
  if (data_ != nullptr) ::munmap(data_, capacity_);
  data_ = nullptr;
  capacity_ = 0;
}

}  // namespace kcache::wire

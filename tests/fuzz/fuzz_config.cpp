// fuzz_config.cpp — kcached's TOML configuration file (daemon/config/config.hpp load_config_file).
//
// load_config_file takes a path, so each input is written to one private temporary file
// (removed at exit). Any outcome is fine but a crash, a leak, UB or an escaping exception.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config/config.hpp"

namespace {

struct TempFile {
  std::string path;
  TempFile() {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir != nullptr ? dir : "/tmp") + "/kcache-fuzz-config-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) std::abort();
    ::close(fd);
  }
  ~TempFile() { ::unlink(path.c_str()); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const TempFile file;
  const int fd = ::open(file.path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0 || ::write(fd, data, size) != static_cast<ssize_t>(size)) std::abort();
  ::close(fd);
  kcache::daemon::DaemonConfig config;
  (void)kcache::daemon::load_config_file(file.path, config);
  return 0;
}

// private_bus.hpp — a private dbus-daemon with the system bus's default policy, for tests.
//
// `PrivateBus::start(dir, policy_files)` writes a bus configuration that copies the default
// policy of Debian's /usr/share/dbus-1/system.conf (deny own, deny method calls unless a
// policy file opens them) plus the given <include>s, runs `dbus-daemon --nofork` on
// unix:path=<dir>/bus.sock and waits until it accepts connections. It returns false (with
// `why()`) when dbus-daemon is not installed. The destructor stops the daemon.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace kcache::test {

class PrivateBus {
 public:
  PrivateBus() = default;
  ~PrivateBus();
  PrivateBus(const PrivateBus&) = delete;
  PrivateBus& operator=(const PrivateBus&) = delete;

  bool start(const std::string& dir, const std::vector<std::string>& policy_files);
  const std::string& address() const noexcept { return address_; }
  const std::string& why() const noexcept { return why_; }

 private:
  pid_t pid_ = -1;
  std::string address_;
  std::string why_;
};

}  // namespace kcache::test

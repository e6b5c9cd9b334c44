// systemd_link.hpp — kcached's side of the service manager: STATUS= updates, SIGHUP reloads
// and the D-Bus object (docs/systemd.md).
//
// Contract (loop thread only):
//  * start(): every 2 s the one-line summary (ServiceSnapshot::summary) is sent as STATUS=
//    when it changed since the last one sent; SIGHUP runs Daemon::reload (which brackets
//    itself with RELOADING=1 … READY=1); D-Bus starts at config().bus_address. Nothing here
//    keeps the loop alive, and nothing here can fail start-up: without NOTIFY_SOCKET the
//    notifications are no-ops, without a bus D-Bus is off (logged once).
//  * shutdown(): stops all of it; called when the daemon stops.
#pragma once

#include <memory>
#include <string>

#include "kcache/result.hpp"
#include "loop/uv.hpp"

namespace kcache::daemon {

class Daemon;
class DbusManager;

class SystemdLink {
 public:
  explicit SystemdLink(Daemon& daemon);
  ~SystemdLink();
  SystemdLink(const SystemdLink&) = delete;
  SystemdLink& operator=(const SystemdLink&) = delete;

  Status start();
  void shutdown();

 private:
  void publish_status();

  Daemon& daemon_;
  UvHandle<uv_timer_t> status_timer_;
  UvHandle<uv_signal_t> sighup_;
  std::unique_ptr<DbusManager> dbus_;
  std::string last_status_;
};

}  // namespace kcache::daemon

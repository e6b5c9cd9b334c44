#include "systemd/systemd_link.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include "loop/contain.hpp"
#include "app/daemon.hpp"
#include "systemd/dbus_manager.hpp"
#include "app/service_snapshot.hpp"

namespace kcache::daemon {

namespace {
// STATUS= is for humans (systemctl status): every couple of seconds is fresh enough and costs
// nothing when the text did not change.
constexpr std::uint64_t kStatusIntervalMs = 2000;
}  // namespace

SystemdLink::SystemdLink(Daemon& daemon) : daemon_(daemon) {}

SystemdLink::~SystemdLink() { shutdown(); }

Status SystemdLink::start() {
  uv_loop_t* loop = daemon_.loop();
  status_timer_ = UvHandle<uv_timer_t>::make();
  uv_timer_init(loop, status_timer_.get());
  status_timer_->data = this;
  uv_timer_start(
      status_timer_.get(),
      [](uv_timer_t* t) {
        if (t->data != nullptr) contain("SystemdLink::publish_status", [&] { static_cast<SystemdLink*>(t->data)->publish_status(); });
      },
      kStatusIntervalMs, kStatusIntervalMs);
  uv_unref(status_timer_.handle());

  sighup_ = UvHandle<uv_signal_t>::make();
  uv_signal_init(loop, sighup_.get());
  sighup_->data = this;
  const int rc = uv_signal_start(
      sighup_.get(),
      [](uv_signal_t* s, int) {
        if (s->data == nullptr) return;
        auto* self = static_cast<SystemdLink*>(s->data);
        // reload() logs its own outcome; a failure leaves the running configuration as it was.
        contain("SIGHUP reload", [self] {
          (void)self->daemon_.reload("SIGHUP");
          self->publish_status();
        });
      },
      SIGHUP);
  if (rc != 0) return uv_error("uv_signal_start(SIGHUP)", rc);
  uv_unref(sighup_.handle());

  dbus_ = std::make_unique<DbusManager>(daemon_, loop);
  dbus_->start(daemon_.config().bus_address);
  return {};
}

void SystemdLink::shutdown() {
  status_timer_.reset();
  sighup_.reset();
  dbus_.reset();
}

void SystemdLink::publish_status() {
  std::string status = ServiceSnapshot::of(daemon_).summary();
  if (status == last_status_) return;
  sd_notifyf(0, "STATUS=%s", status.c_str());
  last_status_ = std::move(status);
}

}  // namespace kcache::daemon

#include "systemd/sd_bus.hpp"

#include <poll.h>
#include <time.h>

#include <cstdlib>
#include <cstring>

#include "loop/contain.hpp"

namespace kcache::daemon {

namespace {

std::uint64_t monotonic_usec() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
}

std::string system_bus_address() {
  if (const char* env = std::getenv("DBUS_SYSTEM_BUS_ADDRESS"); env != nullptr && *env != '\0')
    return env;
  return "unix:path=/run/dbus/system_bus_socket";
}

}  // namespace

Status BusLoop::open(const std::string& address) {
  close();
  SdBus bus;
  address_ = address.empty() ? system_bus_address() : address;
  // sd_bus_open_system() marks the bus untrusted (a system bus); a private address is a bus
  // we only know as an address, so it is opened the same way, explicitly.
  int r = address.empty() ? sd_bus_open_system(bus.out()) : sd_bus_new(bus.out());
  if (r >= 0 && !address.empty()) {
    r = sd_bus_set_address(bus.get(), address.c_str());
    if (r >= 0) r = sd_bus_set_bus_client(bus.get(), 1);
    if (r >= 0) r = sd_bus_set_trusted(bus.get(), 0);
    if (r >= 0) r = sd_bus_start(bus.get());
  }
  if (r < 0)
    return make_error(Errc::unavailable,
                      "cannot connect to D-Bus at " + address_ + ": " + std::strerror(-r));
  bus_ = std::move(bus);

  poll_ = UvHandle<uv_poll_t>::make();
  if (const int rc = uv_poll_init(loop_, poll_.get(), sd_bus_get_fd(bus_.get())); rc != 0) {
    poll_.reset();
    bus_.reset();
    return uv_error("uv_poll_init (D-Bus)", rc);
  }
  poll_->data = this;
  uv_unref(poll_.handle());
  timer_ = UvHandle<uv_timer_t>::make();
  uv_timer_init(loop_, timer_.get());
  timer_->data = this;
  uv_unref(timer_.handle());
  poll_events_ = -1;
  process();  // the connection handshake starts now, not at the first wakeup
  return {};
}

void BusLoop::close() {
  close_requested_ = false;
  poll_.reset();
  timer_.reset();
  bus_.reset();
  poll_events_ = -1;
}

void BusLoop::kick() {
  if (bus_) rearm();
}

void BusLoop::process() {
  if (!bus_) return;
  // Drain everything that is ready; sd_bus_process returns 0 once nothing is left to do.
  while (true) {
    const int r = sd_bus_process(bus_.get(), nullptr);
    if (r < 0) {
      disconnected(std::strerror(-r));
      return;
    }
    if (close_requested_) {  // a callback asked; the bus was still in use then
      close();
      return;
    }
    if (r == 0) break;
  }
  if (sd_bus_is_open(bus_.get()) <= 0) {
    disconnected("connection closed");
    return;
  }
  rearm();
}

void BusLoop::rearm() {
  const int events = sd_bus_get_events(bus_.get());
  if (events < 0) {
    disconnected(std::strerror(-events));
    return;
  }
  const int uv_events =
      ((events & POLLIN) != 0 ? UV_READABLE : 0) | ((events & POLLOUT) != 0 ? UV_WRITABLE : 0);
  if (uv_events != poll_events_) {
    poll_events_ = uv_events;
    uv_poll_start(poll_.get(), uv_events, [](uv_poll_t* p, int, int) {
      if (p->data != nullptr) contain("BusLoop::process", [&] { static_cast<BusLoop*>(p->data)->process(); });
    });
  }
  std::uint64_t until = 0;
  if (sd_bus_get_timeout(bus_.get(), &until) < 0 || until == UINT64_MAX) {
    uv_timer_stop(timer_.get());
    return;
  }
  const std::uint64_t now = monotonic_usec();
  // Round up: waking a little late is harmless, waking early just spins once more.
  const std::uint64_t delay_ms = until > now ? (until - now + 999) / 1000 : 0;
  uv_timer_start(
      timer_.get(),
      [](uv_timer_t* t) {
        if (t->data != nullptr) contain("BusLoop::process", [&] { static_cast<BusLoop*>(t->data)->process(); });
      },
      delay_ms, 0);
}

void BusLoop::disconnected(const std::string& why) {
  // Handles go first: the callback may destroy this object's owner.
  auto notify = std::move(on_disconnect_);
  close();
  if (notify) notify(why);
}

}  // namespace kcache::daemon

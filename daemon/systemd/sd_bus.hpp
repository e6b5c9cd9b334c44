// sd_bus.hpp — sd-bus handles as move-only owners, and one bus connection driven by libuv.
//
// Contract (loop thread only):
//  * `SdBus`, `SdBusSlot`, `SdBusMessage`, `SdBusCreds` each own one reference and drop it on
//    destruction (a bus is flushed and closed first).
//  * `BusLoop::open(address)` starts a client connection: `address` empty is the system bus
//    ($DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket), anything else a D-Bus
//    address. It fails only when the connection cannot even start (no socket: Errc::unavailable
//    naming the address and errno); authentication completes later, from the loop.
//  * The loop drives the bus: a uv_poll on sd_bus_get_fd() with the events sd_bus_get_events()
//    asks for and a uv_timer for sd_bus_get_timeout(); each wakeup calls sd_bus_process() until
//    it returns 0. Neither handle keeps the loop alive. After queuing a message outside a bus
//    callback (a signal from a timer, a late method reply) call `kick()` so it is written.
//  * `on_disconnect` runs once, when the connection fails or drops; the bus is closed then.
#pragma once

#include <systemd/sd-bus.h>

#include <functional>
#include <string>
#include <utility>

#include "kcache/result.hpp"
#include "loop/uv.hpp"

namespace kcache::daemon {

template <class T, T* (*Unref)(T*)>
class SdRef {
 public:
  SdRef() = default;
  explicit SdRef(T* p) noexcept : p_(p) {}  // adopts one reference
  ~SdRef() { reset(); }
  SdRef(SdRef&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  SdRef& operator=(SdRef&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  SdRef(const SdRef&) = delete;
  SdRef& operator=(const SdRef&) = delete;

  T* get() const noexcept { return p_; }
  T** out() noexcept {  // for sd_*_new(&p) style calls
    reset();
    return &p_;
  }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  void reset() noexcept {
    if (p_ != nullptr) Unref(std::exchange(p_, nullptr));
  }

 private:
  T* p_ = nullptr;
};

using SdBus = SdRef<sd_bus, sd_bus_flush_close_unref>;
using SdBusSlot = SdRef<sd_bus_slot, sd_bus_slot_unref>;
using SdBusMessage = SdRef<sd_bus_message, sd_bus_message_unref>;
using SdBusCreds = SdRef<sd_bus_creds, sd_bus_creds_unref>;

class BusLoop {
 public:
  explicit BusLoop(uv_loop_t* loop) : loop_(loop) {}
  ~BusLoop() { close(); }
  BusLoop(const BusLoop&) = delete;
  BusLoop& operator=(const BusLoop&) = delete;

  Status open(const std::string& address);
  void close();
  // From inside a bus callback, where the bus is still in use: closes once it returns.
  void request_close() noexcept { close_requested_ = true; }
  void kick();

  sd_bus* bus() const noexcept { return bus_.get(); }
  bool is_open() const noexcept { return static_cast<bool>(bus_); }
  const std::string& address() const noexcept { return address_; }
  void set_on_disconnect(std::function<void(const std::string&)> fn) {
    on_disconnect_ = std::move(fn);
  }

 private:
  void process();
  void rearm();
  void disconnected(const std::string& why);

  uv_loop_t* loop_;
  SdBus bus_;
  std::string address_;
  UvHandle<uv_poll_t> poll_;
  UvHandle<uv_timer_t> timer_;
  int poll_events_ = -1;
  bool close_requested_ = false;
  std::function<void(const std::string&)> on_disconnect_;
};

}  // namespace kcache::daemon

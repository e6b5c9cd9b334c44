// dbus_manager.hpp — the D-Bus object /org/kcache1, interface org.kcache1.Manager.
//
// Contract (loop thread only):
//  * start(address) connects (empty: the system bus; "none": D-Bus off), exports the object
//    and requests the name org.kcache1. Not reaching the bus, not being allowed the name, or
//    losing the connection later is logged once and the daemon runs on without D-Bus.
//  * Read-only properties: Version (s); CacheBytes, MaxSize, Entries, Hits, Misses, Compiles,
//    ProviderHits, Evictions, InflightCompiles (t), read live. PropertiesChanged carries the
//    changed ones, at most once a second.
//  * GarbageCollect(t max_bytes) → (t removed_entries, t freed_bytes) and Reload() need an
//    admin caller: Daemon::is_admin with the caller's credentials as the bus daemon reports
//    them (never /proc). Others get org.freedesktop.DBus.Error.AccessDenied. max_bytes 0 means
//    the configured target. A failed reload is org.kcache1.Error.ReloadFailed with the reason.
//  * stop() releases everything; a GarbageCollect still running then gets no reply.
#pragma once

#include <memory>
#include <string>

#include "systemd/sd_bus.hpp"
#include "app/service_snapshot.hpp"
#include "loop/uv.hpp"

namespace kcache::daemon {

class Daemon;

class DbusManager {
 public:
  DbusManager(Daemon& daemon, uv_loop_t* loop);
  ~DbusManager();
  DbusManager(const DbusManager&) = delete;
  DbusManager& operator=(const DbusManager&) = delete;

  void start(const std::string& address);
  void stop();
  bool serving() const noexcept { return name_owned_; }

 private:
  static const sd_bus_vtable* vtable();
  static int get_property(sd_bus* bus, const char* path, const char* interface,
                          const char* property, sd_bus_message* reply, void* userdata,
                          sd_bus_error* error);
  static int method_garbage_collect(sd_bus_message* m, void* userdata, sd_bus_error* error);
  static int method_reload(sd_bus_message* m, void* userdata, sd_bus_error* error);
  static int on_name_reply(sd_bus_message* reply, void* userdata, sd_bus_error* error);

  // 0 when the caller may run `method`; else the negative errno of the error set.
  int authorize(sd_bus_message* m, const char* method, sd_bus_error* error);
  void publish_changes();
  // Logs `why` (once per daemon) and turns D-Bus off.
  void give_up(const std::string& why, bool from_callback);

  Daemon& daemon_;
  uv_loop_t* loop_;
  BusLoop bus_;
  SdBusSlot object_slot_;
  SdBusSlot name_slot_;
  UvHandle<uv_timer_t> changes_timer_;
  ServiceSnapshot published_;
  bool name_owned_ = false;
  bool reported_ = false;
  // Late replies (GarbageCollect) hold a weak reference: no reply after stop().
  std::shared_ptr<DbusManager*> alive_;
};

}  // namespace kcache::daemon

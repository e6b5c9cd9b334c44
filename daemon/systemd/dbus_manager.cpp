#include "systemd/dbus_manager.hpp"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "loop/contain.hpp"
#include "app/daemon.hpp"
#include "kcache_config.h"
#include "upkeep/gc.hpp"

namespace kcache::daemon {

namespace {

constexpr const char* kBusName = "org.kcache1";
constexpr const char* kObjectPath = "/org/kcache1";
constexpr const char* kInterface = "org.kcache1.Manager";

struct NumericProperty {
  const char* name;
  std::uint64_t ServiceSnapshot::*field;
};

constexpr NumericProperty kNumericProperties[] = {
    {"CacheBytes", &ServiceSnapshot::bytes},
    {"MaxSize", &ServiceSnapshot::max_size},
    {"Entries", &ServiceSnapshot::entries},
    {"Hits", &ServiceSnapshot::hits},
    {"Misses", &ServiceSnapshot::misses},
    {"Compiles", &ServiceSnapshot::compiles},
    {"ProviderHits", &ServiceSnapshot::provider_hits},
    {"Evictions", &ServiceSnapshot::evictions},
    {"InflightCompiles", &ServiceSnapshot::inflight_compiles},
};

}  // namespace

// sd-bus walks this table for introspection, property access and dispatch. Methods are marked
// UNPRIVILEGED because kcached checks the caller itself (authorize): sd-bus's own check knows
// only root and CAP_SYS_ADMIN, not the daemon's user or an admin group.
const sd_bus_vtable* DbusManager::vtable() {
  static const sd_bus_vtable table[] = {
      SD_BUS_VTABLE_START(0),
      SD_BUS_PROPERTY("Version", "s", DbusManager::get_property, 0, SD_BUS_VTABLE_PROPERTY_CONST),
      SD_BUS_PROPERTY("CacheBytes", "t", DbusManager::get_property, 0,
                      SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
      SD_BUS_PROPERTY("MaxSize", "t", DbusManager::get_property, 0,
                      SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
      SD_BUS_PROPERTY("Entries", "t", DbusManager::get_property, 0,
                      SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
      SD_BUS_PROPERTY("Hits", "t", DbusManager::get_property, 0,
                      SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
      SD_BUS_PROPERTY("Misses", "t", DbusManager::get_property, 0,
                      SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
      SD_BUS_PROPERTY("Compiles", "t", DbusManager::get_property, 0,
                      SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
      SD_BUS_PROPERTY("ProviderHits", "t", DbusManager::get_property, 0,
                      SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
      SD_BUS_PROPERTY("Evictions", "t", DbusManager::get_property, 0,
                      SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
      SD_BUS_PROPERTY("InflightCompiles", "t", DbusManager::get_property, 0,
                      SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
      SD_BUS_METHOD_WITH_NAMES("GarbageCollect", "t", SD_BUS_PARAM(max_bytes), "tt",
                               SD_BUS_PARAM(removed_entries) SD_BUS_PARAM(freed_bytes),
                               DbusManager::method_garbage_collect, SD_BUS_VTABLE_UNPRIVILEGED),
      SD_BUS_METHOD("Reload", "", "", DbusManager::method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
      SD_BUS_VTABLE_END,
  };
  return table;
}

DbusManager::DbusManager(Daemon& daemon, uv_loop_t* loop)
    : daemon_(daemon), loop_(loop), bus_(loop), alive_(std::make_shared<DbusManager*>(this)) {}

DbusManager::~DbusManager() {
  stop();
}

void DbusManager::start(const std::string& address) {
  if (address == "none") {
    spdlog::info("D-Bus: off (--bus-address none)");
    return;
  }
  if (auto opened = bus_.open(address); !opened.ok()) {
    give_up(opened.error().message, false);
    return;
  }
  bus_.set_on_disconnect([this](const std::string& why) {
    give_up("connection to " + bus_.address() + " lost: " + why, false);
  });
  int r = sd_bus_add_object_vtable(bus_.bus(), object_slot_.out(), kObjectPath, kInterface,
                                   vtable(), this);
  if (r >= 0)
    r = sd_bus_request_name_async(bus_.bus(), name_slot_.out(), kBusName, 0, on_name_reply, this);
  if (r < 0) {
    give_up(std::string("cannot export ") + kObjectPath + ": " + std::strerror(-r), false);
    return;
  }
  bus_.kick();
}

void DbusManager::stop() {
  changes_timer_.reset();
  name_slot_.reset();
  object_slot_.reset();
  bus_.close();
  name_owned_ = false;
  alive_.reset();
}

int DbusManager::on_name_reply(sd_bus_message* reply, void* userdata, sd_bus_error*) {
  auto* self = static_cast<DbusManager*>(userdata);
  if (const sd_bus_error* e = sd_bus_message_get_error(reply); e != nullptr) {
    self->give_up(std::string("cannot own the name ") + kBusName + " on " + self->bus_.address() +
                      ": " + (e->message ? e->message : e->name),
                  true);
    return 0;
  }
  self->name_owned_ = true;
  self->published_ = ServiceSnapshot::of(self->daemon_);
  self->changes_timer_ = UvHandle<uv_timer_t>::make();
  uv_timer_init(self->loop_, self->changes_timer_.get());
  self->changes_timer_->data = self;
  // Once a second at most (the contract): a busy cache changes its counters constantly.
  uv_timer_start(
      self->changes_timer_.get(),
      [](uv_timer_t* t) {
        if (t->data != nullptr) contain("DbusManager::publish_changes", [&] { static_cast<DbusManager*>(t->data)->publish_changes(); });
      },
      1000, 1000);
  uv_unref(self->changes_timer_.handle());
  spdlog::info("D-Bus: {} {} on {}", kBusName, kObjectPath, self->bus_.address());
  return 0;
}

void DbusManager::give_up(const std::string& why, bool from_callback) {
  // Said once: a host without a system bus (a container, CI) is normal, not an alarm.
  if (!reported_) spdlog::warn("D-Bus: {}; running without D-Bus", why);
  reported_ = true;
  changes_timer_.reset();
  name_owned_ = false;
  if (from_callback) {
    bus_.request_close();
  } else {
    name_slot_.reset();
    object_slot_.reset();
    bus_.close();
  }
}

int DbusManager::get_property(sd_bus*, const char*, const char*, const char* property,
                              sd_bus_message* reply, void* userdata, sd_bus_error*) {
  auto* self = static_cast<DbusManager*>(userdata);
  if (std::string_view(property) == "Version")
    return sd_bus_message_append(reply, "s", KCACHE_VERSION);
  const ServiceSnapshot now = ServiceSnapshot::of(self->daemon_);
  for (const auto& p : kNumericProperties)
    if (std::string_view(property) == p.name) {
      const std::uint64_t value = now.*p.field;
      return sd_bus_message_append(reply, "t", value);
    }
  return -ENOENT;  // unreachable: sd-bus only asks for properties of the vtable
}

void DbusManager::publish_changes() {
  if (!name_owned_ || !bus_.is_open()) return;
  const ServiceSnapshot now = ServiceSnapshot::of(daemon_);
  std::vector<const char*> changed;
  for (const auto& p : kNumericProperties)
    if (now.*p.field != published_.*p.field) changed.push_back(p.name);
  if (changed.empty()) return;
  changed.push_back(nullptr);
  const int r = sd_bus_emit_properties_changed_strv(bus_.bus(), kObjectPath, kInterface,
                                                    const_cast<char**>(changed.data()));
  if (r < 0) spdlog::debug("D-Bus: PropertiesChanged: {}", std::strerror(-r));
  published_ = now;
  bus_.kick();
}

int DbusManager::authorize(sd_bus_message* m, const char* method, sd_bus_error* error) {
  // Credentials come from the bus daemon (what it saw at connect, SO_PEERCRED), never from
  // /proc/<pid>, which a caller could race.
  SdBusCreds creds;
  const int r = sd_bus_query_sender_creds(
      m, SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID | SD_BUS_CREDS_PID, creds.out());
  ucred peer{};
  peer.pid = 0;
  peer.uid = static_cast<uid_t>(-1);
  peer.gid = static_cast<gid_t>(-1);
  uid_t uid = 0;
  if (r < 0 || sd_bus_creds_get_euid(creds.get(), &uid) < 0) {
    spdlog::warn("refused D-Bus {}: the bus did not tell the caller's uid", method);
    return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                             "permission denied: cannot tell the caller's uid");
  }
  peer.uid = uid;
  pid_t pid = 0;
  if (sd_bus_creds_get_pid(creds.get(), &pid) >= 0) peer.pid = pid;
  gid_t gid = 0;
  if (sd_bus_creds_get_egid(creds.get(), &gid) >= 0) peer.gid = gid;
  if (daemon_.is_admin(peer)) return 0;
  spdlog::warn("refused D-Bus {} from uid {} (pid {}): not an admin", method, peer.uid, peer.pid);
  return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "permission denied: %s requires %s",
                           method, daemon_.admin_policy().describe().c_str());
}

int DbusManager::method_reload(sd_bus_message* m, void* userdata, sd_bus_error* error) {
  auto* self = static_cast<DbusManager*>(userdata);
  if (const int denied = self->authorize(m, "Reload", error); denied < 0) return denied;
  auto report = self->daemon_.reload("D-Bus");
  if (!report.ok())
    return sd_bus_error_setf(error, "org.kcache1.Error.ReloadFailed", "%s",
                             report.error().message.c_str());
  return sd_bus_reply_method_return(m, "");
}

// GarbageCollect: the D-Bus face of the daemon's GC (daemon/upkeep/gc.hpp).
int DbusManager::method_garbage_collect(sd_bus_message* m, void* userdata, sd_bus_error* error) {
  auto* self = static_cast<DbusManager*>(userdata);
  std::uint64_t max_bytes = 0;
  if (const int r = sd_bus_message_read(m, "t", &max_bytes); r < 0) return r;
  if (const int denied = self->authorize(m, "GarbageCollect", error); denied < 0) return denied;

  GcOptions options;
  if (max_bytes != 0) options.max_size = max_bytes;
  spdlog::info("garbage collection requested over D-Bus (max_bytes {})", max_bytes);
  // The collection runs in batches on the loop; the reply goes when it is done.
  auto call = std::make_shared<SdBusMessage>(sd_bus_message_ref(m));
  std::weak_ptr<DbusManager*> alive = self->alive_;
  self->daemon_.collect_garbage(options, [alive, call](const GcReport& report) {
    const auto owner = alive.lock();
    if (!owner || !(*owner)->bus_.is_open()) return;  // D-Bus went away meanwhile
    const int r = sd_bus_reply_method_return(call->get(), "tt", report.removed_entries,
                                             report.freed_bytes);
    if (r < 0) spdlog::debug("D-Bus: GarbageCollect reply: {}", std::strerror(-r));
    (*owner)->bus_.kick();
  });
  return 1;  // answered later
}

}  // namespace kcache::daemon

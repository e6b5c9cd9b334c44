// org.kcache1.Manager.GarbageCollect: the D-Bus face of the daemon's GC (daemon/upkeep/gc.hpp).
#include <spdlog/spdlog.h>

#include <memory>

#include "app/daemon.hpp"
#include "systemd/dbus_manager.hpp"
#include "upkeep/gc.hpp"

namespace kcache::daemon {

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

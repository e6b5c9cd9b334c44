// Store: is it still the store that was opened (store.hpp: still_in_place).
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>

#include "store.hpp"

namespace kcache::daemon {

Status Store::still_in_place() const {
  KC_TRY(same_file(root_fd_.get(), root_));
  KC_TRY(same_file(objects_fd_.get(), objects_path_));
  KC_TRY(same_file(tmp_fd_.get(), root_ + "/tmp"));
  for (int i = 0; i < 256; ++i) {
    char shard[3];
    std::snprintf(shard, sizeof shard, "%02x", i);
    KC_TRY(same_file(shard_fds_[static_cast<std::size_t>(i)].get(), objects_path_ + "/" + shard));
  }
  return {};
}

}  // namespace kcache::daemon

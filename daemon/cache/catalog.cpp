#include "cache/catalog.hpp"

#include <cstdlib>

namespace kcache::daemon {

void Catalog::add_ref(const Entry& e) {
  if (refs_[e.digest]++ == 0) {
    bytes_ += e.disk_size;
    apparent_bytes_ += e.size;
  }
}

bool Catalog::drop_ref(const Entry& e) {
  const auto it = refs_.find(e.digest);
  if (it == refs_.end()) return true;
  if (--it->second > 0) return false;
  refs_.erase(it);
  bytes_ -= e.disk_size;
  apparent_bytes_ -= e.size;
  return true;
}

std::optional<Entry> Catalog::insert(const Digest128& key, const Entry& entry) {
  auto [it, inserted] = entries_.try_emplace(key, entry);
  std::optional<Entry> orphaned;
  if (!inserted) {
    const Entry old = it->second;
    it->second = entry;
    add_ref(entry);  // before dropping the old one: the digest may be the same
    if (drop_ref(old)) orphaned = old;
    return orphaned;
  }
  add_ref(entry);
  return orphaned;
}

bool Catalog::erase(const Digest128& key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  const bool last = drop_ref(it->second);
  entries_.erase(it);
  return last;
}

std::uint16_t Catalog::intern_target(std::string_view target) {
  const auto it = target_ids_.find(std::string(target));
  if (it != target_ids_.end()) return it->second;
  if (targets_.size() >= 0xffff) std::abort();  // 65k distinct GPU targets cannot happen
  const auto id = static_cast<std::uint16_t>(targets_.size());
  targets_.emplace_back(target);
  target_ids_.emplace(std::string(target), id);
  return id;
}

}  // namespace kcache::daemon

#include "client/targets.hpp"

#include <mutex>

namespace kcache::client {

bool LearnedTargets::find(std::string_view given, std::string& out) const {
  std::shared_lock lock(mu_);
  const auto it = map_.find(given);
  if (it == map_.end()) return false;
  out.assign(it->second);
  return true;
}

void LearnedTargets::learn(std::uint64_t generation, std::string_view given,
                           std::string_view canonical) {
  std::unique_lock lock(mu_);
  // A reply from a connection to the previous daemon must not repopulate the fresh map.
  if (generation != generation_) return;
  if (map_.size() >= kMaxEntries && map_.find(given) == map_.end()) map_.clear();
  map_.insert_or_assign(std::string(given), std::string(canonical));
}

void LearnedTargets::reset(std::uint64_t generation) {
  std::unique_lock lock(mu_);
  map_.clear();
  generation_ = generation;
}

}  // namespace kcache::client

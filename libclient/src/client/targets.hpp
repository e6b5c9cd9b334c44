// client/targets.hpp — what the client has learned about target spellings.
//
// The daemon normalizes targets (`9.0a`, `sm90a` → `sm_90a`); the key of a key-only lookup
// must be computed over the normalized form. Rather than carry a second copy of the
// normalization rules, the client remembers "target as the caller spelled it → the target
// the daemon answered with" from successful replies.
//
// Contract:
//  * find(given, out) copies the canonical form into `out` and returns true if known.
//  * learn(generation, given, canonical) records a mapping observed on a connection of that
//    daemon generation; a mapping from an older generation is ignored.
//  * reset(generation) forgets everything: a different daemon (another hello) may normalize
//    differently. Bounded: past kMaxEntries the map starts over.
//  * Thread-safe; lookups take a shared lock and do not allocate beyond `out`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kcache::client {

class LearnedTargets {
 public:
  static constexpr std::size_t kMaxEntries = 256;

  bool find(std::string_view given, std::string& out) const;
  void learn(std::uint64_t generation, std::string_view given, std::string_view canonical);
  void reset(std::uint64_t generation);

 private:
  // Transparent hashing lets find() look a string_view up without building a std::string.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> map_;
  std::uint64_t generation_ = 0;
};

}  // namespace kcache::client

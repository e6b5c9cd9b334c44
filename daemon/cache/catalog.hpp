// catalog.hpp — the in-memory map of cache entries that serves every hit.
//
// Contract (loop thread only):
//  * find(key) is a hash lookup: no I/O, no allocation.
//  * Objects are shared between keys with the same bytes: the catalog counts references per
//    digest, and `erase` reports when the last reference to an object went away, so the
//    caller may delete the file. `bytes()` counts each distinct object's allocated size once
//    (what budgets count); `apparent_bytes()` their sizes.
//  * Targets are interned (a handful of distinct strings) to keep an entry small.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/entry.hpp"

namespace kcache::daemon {

class Catalog {
 public:
  using Map = std::unordered_map<Digest128, Entry, Digest128Hash>;

  Entry* find(const Digest128& key) noexcept {
    const auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
  }
  const Entry* find(const Digest128& key) const noexcept {
    const auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
  }

  // Inserts or replaces the entry for `key`. When a replaced entry's object lost its last
  // reference, returns that old entry so the caller can delete its file.
  std::optional<Entry> insert(const Digest128& key, const Entry& entry);
  // Removes `key`; returns true when no other entry references its object any more.
  bool erase(const Digest128& key);

  bool digest_referenced(const Digest128& digest) const noexcept {
    return refs_.contains(digest);
  }

  std::uint16_t intern_target(std::string_view target);
  const std::string& target_name(std::uint16_t id) const { return targets_[id]; }

  std::size_t size() const noexcept { return entries_.size(); }
  std::uint64_t bytes() const noexcept { return bytes_; }
  std::uint64_t apparent_bytes() const noexcept { return apparent_bytes_; }
  const Map& entries() const noexcept { return entries_; }
  void reserve(std::size_t n) { entries_.reserve(n); refs_.reserve(n); }

 private:
  void add_ref(const Entry& e);
  bool drop_ref(const Entry& e);

  Map entries_;
  std::unordered_map<Digest128, std::uint32_t, Digest128Hash> refs_;
  std::vector<std::string> targets_;
  std::unordered_map<std::string, std::uint16_t> target_ids_;
  std::uint64_t bytes_ = 0;
  std::uint64_t apparent_bytes_ = 0;
};

}  // namespace kcache::daemon

// percentiles.hpp — latency samples to the figures every benchmark reports.
//
// Contract: `summarize(samples_us, wall_s)` sorts a copy and returns a JSON object with
// p50_us, p99_us, p999_us, max_us, count and per_sec (count / wall_s). Nearest-rank
// percentiles; an empty sample set gives zeros.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

namespace kcache::bench {

inline nlohmann::json summarize(std::vector<float> us, double wall_s) {
  if (us.empty()) return {{"p50_us", 0}, {"p99_us", 0}, {"p999_us", 0}, {"max_us", 0}, {"count", 0}, {"per_sec", 0}};
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, static_cast<std::size_t>(q * static_cast<double>(us.size())))]; };
  return {{"p50_us", at(0.50)},
          {"p99_us", at(0.99)},
          {"p999_us", at(0.999)},
          {"max_us", us.back()},
          {"count", us.size()},
          {"per_sec", wall_s > 0 ? static_cast<double>(us.size()) / wall_s : 0.0}};
}

}  // namespace kcache::bench

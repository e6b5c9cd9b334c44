// log_fields.hpp — request facts attached to the log lines written while they are in scope.
//
// Contract: a `ScopedLogFields` sets, for the current thread and until it is destroyed, the
// cache key and module name that log lines concern; nested scopes restore the outer values.
// The journal sink writes them as the fields KCACHE_KEY= and KCACHE_MODULE= (journalctl
// KCACHE_MODULE=axpy); the stderr sink ignores them. Views must outlive the scope.
#pragma once

#include <string_view>

namespace kcache::daemon {

struct LogFields {
  std::string_view key;
  std::string_view module;
};

const LogFields& current_log_fields() noexcept;

class ScopedLogFields {
 public:
  ScopedLogFields(std::string_view key, std::string_view module) noexcept;
  ~ScopedLogFields();
  ScopedLogFields(const ScopedLogFields&) = delete;
  ScopedLogFields& operator=(const ScopedLogFields&) = delete;

 private:
  LogFields saved_;
};

}  // namespace kcache::daemon

#include "systemd/log_fields.hpp"

namespace kcache::daemon {

namespace {
thread_local LogFields t_fields;
}  // namespace

const LogFields& current_log_fields() noexcept { return t_fields; }

ScopedLogFields::ScopedLogFields(std::string_view key, std::string_view module) noexcept
    : saved_(t_fields) {
  t_fields = LogFields{key, module};
}

ScopedLogFields::~ScopedLogFields() { t_fields = saved_; }

}  // namespace kcache::daemon

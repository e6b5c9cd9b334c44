#include "handlers/control_requests.hpp"

#include <nlohmann/json.hpp>

#include "handlers/control_reply.hpp"
#include "handlers/request_fields.hpp"

namespace kcache::daemon {

using nlohmann::json;

namespace {
constexpr std::uint64_t kMaxAgeSeconds = 100ull * 365 * 24 * 3600;  // a century

template <class T>
Status status_of(const Result<T>& r) {
  if (r.ok()) return {};
  return r.error();
}
}  // namespace

Result<ListRequest> decode_list(std::string_view payload) {
  KC_TRY_ASSIGN(const json doc, control_request(payload, "list", {"name", "limit"}));
  const RequestFields fields("list", doc);
  ListRequest r;
  KC_TRY_ASSIGN(r.name, fields.text("name"));
  KC_TRY_ASSIGN(r.limit, fields.count("limit"));
  return r;
}

Result<GcOptions> decode_gc(std::string_view payload) {
  KC_TRY_ASSIGN(const json doc, control_request(payload, "gc", {"max_size", "max_age_s", "dry_run"}));
  const RequestFields fields("gc", doc);
  GcOptions o;
  KC_TRY_ASSIGN(o.max_size, fields.optional_count("max_size"));
  // Seconds that fit a signed millisecond count: anything longer is "forever" anyway.
  KC_TRY_ASSIGN(const auto max_age, fields.optional_count("max_age_s", kMaxAgeSeconds));
  if (max_age) o.max_age = std::chrono::seconds(static_cast<std::int64_t>(*max_age));
  KC_TRY_ASSIGN(o.dry_run, fields.flag("dry_run", o.dry_run));
  return o;
}

Result<EvictRequest> decode_evict(std::string_view payload) {
  KC_TRY_ASSIGN(const json doc, control_request(payload, "evict", {"key", "name", "force"}));
  const RequestFields fields("evict", doc);
  EvictRequest r;
  KC_TRY_ASSIGN(r.key_hex, fields.text("key"));
  KC_TRY_ASSIGN(r.name, fields.text("name"));
  KC_TRY_ASSIGN(r.force, fields.flag("force"));
  if (r.key_hex.empty() == r.name.empty())
    return make_error(Errc::invalid_argument, "evict needs exactly one of a key or a name");
  return r;
}

Result<ReportRequest> decode_report(std::string_view payload) {
  KC_TRY_ASSIGN(const json doc, control_request(payload, "report", {"fallbacks", "compile_ms"}));
  const RequestFields fields("report", doc);
  ReportRequest r;
  KC_TRY_ASSIGN(r.fallbacks, fields.count("fallbacks"));
  KC_TRY_ASSIGN(r.compile_ms, fields.count("compile_ms"));
  return r;
}

Status decode_fieldless(std::string_view payload, wire::Opcode op) {
  KC_TRY(control_request(payload, wire::opcode_name(op)));
  return {};
}

Status decode_control(wire::Opcode op, std::string_view payload) {
  switch (op) {
    case wire::Opcode::list: return status_of(decode_list(payload));
    case wire::Opcode::gc: return status_of(decode_gc(payload));
    case wire::Opcode::evict: return status_of(decode_evict(payload));
    case wire::Opcode::report: return status_of(decode_report(payload));
    case wire::Opcode::status:
    case wire::Opcode::verify:
    case wire::Opcode::providers:
    case wire::Opcode::devices:
    case wire::Opcode::prefetch:
    case wire::Opcode::reload: return decode_fieldless(payload, op);
    case wire::Opcode::hello:
    case wire::Opcode::get:
    case wire::Opcode::compile: break;
  }
  return make_error(Errc::invalid_argument,
                    std::string(wire::opcode_name(op)) + " is not a control operation");
}

}  // namespace kcache::daemon

#include "wire/messages.hpp"

#include <bitset>

#include "wire/fields.hpp"

namespace kcache::wire {

namespace {

// Rejects a second occurrence of a singular field.
class SeenTags {
 public:
  Status once(std::uint16_t tag) {
    if (tag >= seen_.size()) return {};
    if (seen_.test(tag))
      return make_error(Errc::protocol, "duplicate field " + std::to_string(tag));
    seen_.set(tag);
    return {};
  }
  bool has(Tag tag) const { return seen_.test(static_cast<std::uint16_t>(tag)); }

 private:
  std::bitset<64> seen_;
};

Error missing(const char* what) {
  return make_error(Errc::protocol, std::string("missing required field '") + what + "'");
}

// Walks every field of `payload`, calling on_field(field) -> Status.
template <class F>
Status walk(std::string_view payload, F&& on_field) {
  FieldReader reader(payload);
  while (true) {
    KC_TRY_ASSIGN(auto field, reader.next());
    if (!field) return {};
    KC_TRY(on_field(*field));
  }
}

// Reads status/message/log; returns the error when status != ok, else ok.
struct ReplyStatus {
  Errc status = Errc::ok;
  bool has_status = false;
  std::string message;
  std::string log;

  // Returns true when the field was one of the status fields.
  Result<bool> take(const Field& f, SeenTags& seen) {
    switch (static_cast<Tag>(f.tag)) {
      case Tag::status: {
        KC_TRY(seen.once(f.tag));
        KC_TRY_ASSIGN(const std::uint16_t v, f.as_u16());
        status = static_cast<Errc>(v);
        has_status = true;
        return true;
      }
      case Tag::message:
        KC_TRY(seen.once(f.tag));
        message.assign(f.value);
        return true;
      case Tag::log:
        KC_TRY(seen.once(f.tag));
        log.assign(f.value);
        return true;
      default:
        return false;
    }
  }
  Status result() const {
    if (!has_status) return missing("status");
    if (status != Errc::ok) {
      std::string msg = message.empty() ? errc_name(status) : message;
      return make_error(status, std::move(msg), log);
    }
    return {};
  }
};

// Decodes a reply with `extra(field, seen) -> Status` for the reply-specific fields.
template <class F>
Status decode_reply(std::string_view payload, F&& extra) {
  SeenTags seen;
  ReplyStatus rs;
  KC_TRY(walk(payload, [&](const Field& f) -> Status {
    KC_TRY_ASSIGN(const bool taken, rs.take(f, seen));
    if (taken) return {};
    return extra(f, seen);
  }));
  return rs.result();
}

void write_ok(FieldWriter& w) { w.u16(Tag::status, 0); }

void write_headers(FieldWriter& w, const std::vector<NamedHeader>& headers) {
  for (const auto& h : headers) {
    w.str(Tag::header_name, h.name);
    w.bytes(Tag::header_data, h.data);
  }
}

// Shared by get requests and compile jobs: name/source/headers/options/target.
struct ModuleFields {
  std::optional<std::string> pending_header;
  RepeatedLimits limits;

  static Error over(const char* what, std::size_t limit) {
    return make_error(Errc::too_large, std::string(what) + " is over the limit of " +
                                           std::to_string(limit));
  }

  Result<bool> take(const Field& f, SeenTags& seen, std::string& name, std::string& target,
                    std::optional<std::string>& source, std::vector<NamedHeader>& headers,
                    std::vector<std::string>& options) {
    switch (static_cast<Tag>(f.tag)) {
      case Tag::name:
        KC_TRY(seen.once(f.tag));
        name.assign(f.value);
        return true;
      case Tag::target:
        KC_TRY(seen.once(f.tag));
        target.assign(f.value);
        return true;
      case Tag::source:
        KC_TRY(seen.once(f.tag));
        source.emplace(f.value);
        return true;
      case Tag::header_name:
        if (pending_header)
          return make_error(Errc::protocol, "header_name without header_data");
        pending_header.emplace(f.value);
        return true;
      case Tag::header_data:
        if (!pending_header) return make_error(Errc::protocol, "header_data without header_name");
        if (headers.size() >= limits.max_headers)
          return over("header count (limits.max_headers)", limits.max_headers);
        headers.push_back({std::move(*pending_header), std::string(f.value)});
        pending_header.reset();
        return true;
      case Tag::option:
        if (options.size() >= limits.max_options)
          return over("option count (limits.max_options)", limits.max_options);
        options.emplace_back(f.value);
        return true;
      default:
        return false;
    }
  }
  Status finish() const {
    if (pending_header) return make_error(Errc::protocol, "header_name without header_data");
    return {};
  }
};

}  // namespace

const char* origin_name(Origin o) noexcept {
  switch (o) {
    case Origin::provider: return "provider";
    case Origin::hit: return "hit";
    case Origin::compiled: return "compiled";
    case Origin::fallback: return "fallback";
  }
  return "unknown";
}

std::optional<Origin> parse_origin(std::string_view s) noexcept {
  if (s == "provider") return Origin::provider;
  if (s == "hit") return Origin::hit;
  if (s == "compiled") return Origin::compiled;
  return std::nullopt;
}

void encode(std::string& out, const HelloRequest& m) {
  FieldWriter w(out);
  w.str(Tag::magic, kMagic);
  w.u32(Tag::proto_min, m.proto_min);
  w.u32(Tag::proto_max, m.proto_max);
  w.u64(Tag::capabilities, m.capabilities);
}

void encode(std::string& out, const HelloReply& m) {
  FieldWriter w(out);
  write_ok(w);
  w.u32(Tag::proto, m.proto);
  w.str(Tag::daemon_version, m.daemon_version);
  w.u64(Tag::capabilities, m.capabilities);
  w.u32(Tag::max_frame, m.max_frame);
  for (const auto& c : m.compilers) w.str(Tag::compiler, c.backend + "=" + c.identity);
  for (const auto& t : m.device_targets) w.str(Tag::device_target, t);
}

void encode(std::string& out, const GetRequest& m) {
  FieldWriter w(out);
  w.str(Tag::name, m.name);
  if (!m.version.empty()) w.str(Tag::version, m.version);
  if (!m.target.empty()) w.str(Tag::target, m.target);
  if (m.device) w.u32(Tag::device, *m.device);
  if (m.source) w.bytes(Tag::source, *m.source);
  write_headers(w, m.headers);
  for (const auto& o : m.options) w.str(Tag::option, o);
  if (m.key) w.digest(Tag::key, *m.key);
  if (m.flags != 0) w.u32(Tag::get_flags, m.flags);
  if (!m.system.empty()) w.str(Tag::system, m.system);
}

void encode(std::string& out, const ModuleReply& m) {
  FieldWriter w(out);
  write_ok(w);
  w.str(Tag::path, m.path);
  w.u64(Tag::size, m.size);
  w.digest(Tag::digest, m.digest);
  w.str(Tag::origin, origin_name(m.origin));
  w.str(Tag::target, m.target);
  w.digest(Tag::key, m.key);
}

void encode(std::string& out, const ControlReply& m) {
  FieldWriter w(out);
  write_ok(w);
  w.str(Tag::json, m.json);
}

void encode(std::string& out, const CompileJob& m) {
  FieldWriter w(out);
  w.str(Tag::backend, m.backend);
  w.str(Tag::identity, m.identity);
  w.str(Tag::target, m.target);
  w.str(Tag::name, m.name);
  w.bytes(Tag::source, m.source);
  write_headers(w, m.headers);
  for (const auto& o : m.options) w.str(Tag::option, o);
}

void encode(std::string& out, const CompileResult& m) {
  FieldWriter w(out);
  write_ok(w);
  w.bytes(Tag::binary, m.binary);
  w.str(Tag::log, m.log);
}

void encode_error(std::string& out, const Error& e) {
  FieldWriter w(out);
  w.u16(Tag::status, static_cast<std::uint16_t>(e.code));
  w.str(Tag::message, e.message);
  if (!e.log.empty()) w.str(Tag::log, e.log);
}

void encode_json_request(std::string& out, std::string_view json) {
  FieldWriter w(out);
  w.str(Tag::json, json);
}

Result<HelloRequest> decode_hello_request(std::string_view payload) {
  HelloRequest m;
  SeenTags seen;
  bool magic_ok = false;
  KC_TRY(walk(payload, [&](const Field& f) -> Status {
    KC_TRY(seen.once(f.tag));
    switch (static_cast<Tag>(f.tag)) {
      case Tag::magic:
        magic_ok = f.value == kMagic;
        return {};
      case Tag::proto_min: {
        KC_TRY_ASSIGN(m.proto_min, f.as_u32());
        return {};
      }
      case Tag::proto_max: {
        KC_TRY_ASSIGN(m.proto_max, f.as_u32());
        return {};
      }
      case Tag::capabilities: {
        KC_TRY_ASSIGN(m.capabilities, f.as_u64());
        return {};
      }
      default:
        return {};
    }
  }));
  if (!magic_ok) return make_error(Errc::protocol, "hello without the 'kcache' magic");
  if (!seen.has(Tag::proto_min) || !seen.has(Tag::proto_max)) return missing("proto_min/max");
  return m;
}

Result<HelloReply> decode_hello_reply(std::string_view payload) {
  HelloReply m;
  KC_TRY(decode_reply(payload, [&](const Field& f, SeenTags& seen) -> Status {
    switch (static_cast<Tag>(f.tag)) {
      case Tag::proto: {
        KC_TRY(seen.once(f.tag));
        KC_TRY_ASSIGN(m.proto, f.as_u32());
        return {};
      }
      case Tag::daemon_version:
        KC_TRY(seen.once(f.tag));
        m.daemon_version.assign(f.value);
        return {};
      case Tag::capabilities: {
        KC_TRY(seen.once(f.tag));
        KC_TRY_ASSIGN(m.capabilities, f.as_u64());
        return {};
      }
      case Tag::max_frame: {
        KC_TRY(seen.once(f.tag));
        KC_TRY_ASSIGN(m.max_frame, f.as_u32());
        return {};
      }
      case Tag::compiler: {
        const auto eq = f.value.find('=');
        if (eq == std::string_view::npos)
          return make_error(Errc::protocol, "compiler field without '='");
        m.compilers.push_back({std::string(f.value.substr(0, eq)), std::string(f.value.substr(eq + 1))});
        return {};
      }
      case Tag::device_target:
        m.device_targets.emplace_back(f.value);
        return {};
      default:
        return {};
    }
  }));
  if (m.proto == 0) return missing("proto");
  return m;
}

Result<GetRequest> decode_get_request(std::string_view payload, const RepeatedLimits& limits) {
  GetRequest m;
  SeenTags seen;
  ModuleFields mf;
  mf.limits = limits;
  KC_TRY(walk(payload, [&](const Field& f) -> Status {
    KC_TRY_ASSIGN(const bool taken,
                  mf.take(f, seen, m.name, m.target, m.source, m.headers, m.options));
    if (taken) return {};
    switch (static_cast<Tag>(f.tag)) {
      case Tag::version:
        KC_TRY(seen.once(f.tag));
        m.version.assign(f.value);
        return {};
      case Tag::device: {
        KC_TRY(seen.once(f.tag));
        KC_TRY_ASSIGN(m.device, f.as_u32());
        return {};
      }
      case Tag::key: {
        KC_TRY(seen.once(f.tag));
        KC_TRY_ASSIGN(m.key, f.as_digest());
        return {};
      }
      case Tag::get_flags: {
        KC_TRY(seen.once(f.tag));
        KC_TRY_ASSIGN(m.flags, f.as_u32());
        return {};
      }
      case Tag::system:
        KC_TRY(seen.once(f.tag));
        m.system.assign(f.value);
        return {};
      default:
        return {};
    }
  }));
  KC_TRY(mf.finish());
  if (!seen.has(Tag::name)) return missing("name");
  return m;
}

Result<ModuleReply> decode_module_reply(std::string_view payload) {
  ModuleReply m;
  bool has_path = false;
  KC_TRY(decode_reply(payload, [&](const Field& f, SeenTags& seen) -> Status {
    switch (static_cast<Tag>(f.tag)) {
      case Tag::path:
        KC_TRY(seen.once(f.tag));
        m.path.assign(f.value);
        has_path = true;
        return {};
      case Tag::size: {
        KC_TRY(seen.once(f.tag));
        KC_TRY_ASSIGN(m.size, f.as_u64());
        return {};
      }
      case Tag::digest: {
        KC_TRY(seen.once(f.tag));
        KC_TRY_ASSIGN(m.digest, f.as_digest());
        return {};
      }
      case Tag::origin: {
        KC_TRY(seen.once(f.tag));
        const auto o = parse_origin(f.value);
        if (!o) return make_error(Errc::protocol, "unknown origin '" + std::string(f.value) + "'");
        m.origin = *o;
        return {};
      }
      case Tag::target:
        KC_TRY(seen.once(f.tag));
        m.target.assign(f.value);
        return {};
      case Tag::key: {
        KC_TRY(seen.once(f.tag));
        KC_TRY_ASSIGN(m.key, f.as_digest());
        return {};
      }
      default:
        return {};
    }
  }));
  if (!has_path) return missing("path");
  return m;
}

Result<std::string> decode_json_request(std::string_view payload) {
  std::string json;
  SeenTags seen;
  KC_TRY(walk(payload, [&](const Field& f) -> Status {
    if (static_cast<Tag>(f.tag) != Tag::json) return {};
    KC_TRY(seen.once(f.tag));
    json.assign(f.value);
    return {};
  }));
  if (json.empty()) json = "{}";
  return json;
}

Result<ControlReply> decode_control_reply(std::string_view payload) {
  ControlReply m;
  KC_TRY(decode_reply(payload, [&](const Field& f, SeenTags& seen) -> Status {
    if (static_cast<Tag>(f.tag) != Tag::json) return {};
    KC_TRY(seen.once(f.tag));
    m.json.assign(f.value);
    return {};
  }));
  return m;
}

Result<CompileJob> decode_compile_job(std::string_view payload) {
  CompileJob m;
  SeenTags seen;
  ModuleFields mf;
  std::optional<std::string> source;
  KC_TRY(walk(payload, [&](const Field& f) -> Status {
    KC_TRY_ASSIGN(const bool taken,
                  mf.take(f, seen, m.name, m.target, source, m.headers, m.options));
    if (taken) return {};
    switch (static_cast<Tag>(f.tag)) {
      case Tag::backend:
        KC_TRY(seen.once(f.tag));
        m.backend.assign(f.value);
        return {};
      case Tag::identity:
        KC_TRY(seen.once(f.tag));
        m.identity.assign(f.value);
        return {};
      default:
        return {};
    }
  }));
  KC_TRY(mf.finish());
  if (!source) return missing("source");
  if (m.backend.empty()) return missing("backend");
  if (m.target.empty()) return missing("target");
  m.source = std::move(*source);
  return m;
}

Result<CompileResult> decode_compile_result(std::string_view payload) {
  CompileResult m;
  bool has_binary = false;
  // The log of a successful compile travels in `log`; ReplyStatus keeps it for errors only.
  SeenTags seen;
  ReplyStatus rs;
  KC_TRY(walk(payload, [&](const Field& f) -> Status {
    if (static_cast<Tag>(f.tag) == Tag::binary) {
      KC_TRY(seen.once(f.tag));
      m.binary.assign(f.value);
      has_binary = true;
      return {};
    }
    KC_TRY_ASSIGN(const bool taken, rs.take(f, seen));
    (void)taken;
    return {};
  }));
  KC_TRY(rs.result());
  if (!has_binary) return missing("binary");
  m.log = std::move(rs.log);
  return m;
}

Result<void> decode_status(std::string_view payload) {
  return decode_reply(payload, [](const Field&, SeenTags&) -> Status { return {}; });
}

}  // namespace kcache::wire

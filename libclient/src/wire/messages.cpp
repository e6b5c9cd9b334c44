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
      return make_error(Errc::protocol, "duplicate field '" + tag_name(tag) + "'");
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

// A message's singular field: its tag and the member its value goes to. A decoder lists its
// message's fields as bindings; take() routes a field to the one with its tag.
template <class T>
struct Bind {
  Tag tag;
  T& out;
};
template <class T>
Bind<T> bind(Tag tag, T& out) {
  return {tag, out};
}

// One value into a member, by the member's type (the def's type is already checked).
Status assign(const Field& f, std::string& out) {
  out.assign(f.value);
  return {};
}
Status assign(const Field& f, std::optional<std::string>& out) {
  out.emplace(f.value);
  return {};
}
Status assign(const Field& f, std::uint16_t& out) {
  KC_TRY_ASSIGN(out, f.as_u16());
  return {};
}
Status assign(const Field& f, std::uint32_t& out) {
  KC_TRY_ASSIGN(out, f.as_u32());
  return {};
}
Status assign(const Field& f, std::optional<std::uint32_t>& out) {
  KC_TRY_ASSIGN(out, f.as_u32());
  return {};
}
Status assign(const Field& f, std::uint64_t& out) {
  KC_TRY_ASSIGN(out, f.as_u64());
  return {};
}
Status assign(const Field& f, Digest128& out) {
  KC_TRY_ASSIGN(out, f.as_digest());
  return {};
}
Status assign(const Field& f, std::optional<Digest128>& out) {
  KC_TRY_ASSIGN(out, f.as_digest());
  return {};
}
Status assign(const Field& f, PathKind& out) {
  KC_TRY_ASSIGN(const std::uint8_t v, f.as_u8());
  if (v > static_cast<std::uint8_t>(PathKind::directory))
    return make_error(Errc::protocol, "unknown path kind " + std::to_string(v));
  out = static_cast<PathKind>(v);
  return {};
}
Status assign(const Field& f, Origin& out) {
  const auto o = parse_origin(f.value);
  if (!o) return make_error(Errc::protocol, "unknown origin '" + std::string(f.value) + "'");
  out = *o;
  return {};
}

// Takes `f` into the binding with its tag (once per message); false when none has it.
template <class... T>
Result<bool> take(const Field& f, SeenTags& seen, Bind<T>... binds) {
  Status status;
  bool taken = false;
  const auto try_one = [&](auto& b) {
    if (taken || f.tag != static_cast<std::uint16_t>(b.tag)) return;
    taken = true;
    status = seen.once(f.tag);
    if (status.ok()) status = assign(f, b.out);
  };
  (try_one(binds), ...);
  if (!status.ok()) return std::move(status).error();
  return taken;
}

// take() for a decoder that skips any other field.
template <class... T>
Status take_known(const Field& f, SeenTags& seen, Bind<T>... binds) {
  KC_TRY(take(f, seen, binds...));
  return {};
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

  std::uint16_t code = 0;

  // True when the field was one of the status fields.
  Result<bool> take(const Field& f, SeenTags& seen) {
    KC_TRY_ASSIGN(const bool taken, wire::take(f, seen, bind(Tag::status, code),
                                               bind(Tag::message, message), bind(Tag::log, log)));
    if (taken && f.tag == static_cast<std::uint16_t>(Tag::status)) {
      status = static_cast<Errc>(code);
      has_status = true;
    }
    return taken;
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
    KC_TRY_ASSIGN(const bool singular, wire::take(f, seen, bind(Tag::name, name),
                                                  bind(Tag::target, target), bind(Tag::source, source)));
    if (singular) return true;
    switch (static_cast<Tag>(f.tag)) {
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
  // Absent for a file: what a version-1 peer that predates directories sends and expects.
  if (m.path_kind != PathKind::file) w.u8(Tag::path_kind, static_cast<std::uint8_t>(m.path_kind));
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
  std::string magic;
  KC_TRY(walk(payload, [&](const Field& f) -> Status {
    return take_known(f, seen, bind(Tag::magic, magic), bind(Tag::proto_min, m.proto_min),
                bind(Tag::proto_max, m.proto_max), bind(Tag::capabilities, m.capabilities));
  }));
  if (magic != kMagic) return make_error(Errc::protocol, "hello without the 'kcache' magic");
  if (!seen.has(Tag::proto_min)) return missing("proto_min");
  if (!seen.has(Tag::proto_max)) return missing("proto_max");
  return m;
}

Result<HelloReply> decode_hello_reply(std::string_view payload) {
  HelloReply m;
  KC_TRY(decode_reply(payload, [&](const Field& f, SeenTags& seen) -> Status {
    KC_TRY_ASSIGN(const bool taken,
                  take(f, seen, bind(Tag::proto, m.proto), bind(Tag::daemon_version, m.daemon_version),
                       bind(Tag::capabilities, m.capabilities), bind(Tag::max_frame, m.max_frame)));
    if (taken) return {};
    switch (static_cast<Tag>(f.tag)) {
      case Tag::compiler: {
        const auto eq = f.value.find('=');
        if (eq == std::string_view::npos)
          return make_error(Errc::protocol, "field 'compiler' without '='");
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
    return take_known(f, seen, bind(Tag::version, m.version), bind(Tag::device, m.device),
                bind(Tag::key, m.key), bind(Tag::get_flags, m.flags), bind(Tag::system, m.system));
  }));
  KC_TRY(mf.finish());
  if (!seen.has(Tag::name)) return missing("name");
  return m;
}

Result<ModuleReply> decode_module_reply(std::string_view payload) {
  ModuleReply m;
  bool has_path = false;
  KC_TRY(decode_reply(payload, [&](const Field& f, SeenTags& seen) -> Status {
    KC_TRY_ASSIGN(const bool taken,
                  take(f, seen, bind(Tag::path, m.path), bind(Tag::size, m.size),
                       bind(Tag::digest, m.digest), bind(Tag::origin, m.origin),
                       bind(Tag::target, m.target), bind(Tag::key, m.key),
                       bind(Tag::path_kind, m.path_kind)));
    if (taken && f.tag == static_cast<std::uint16_t>(Tag::path)) has_path = true;
    return {};
  }));
  if (!has_path) return missing("path");
  return m;
}

Result<std::string> decode_json_request(std::string_view payload) {
  std::string json;
  SeenTags seen;
  KC_TRY(walk(payload, [&](const Field& f) -> Status {
    return take_known(f, seen, bind(Tag::json, json));
  }));
  if (json.empty()) json = "{}";
  return json;
}

Result<ControlReply> decode_control_reply(std::string_view payload) {
  ControlReply m;
  KC_TRY(decode_reply(payload, [&](const Field& f, SeenTags& seen) -> Status {
    return take_known(f, seen, bind(Tag::json, m.json));
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
    return take_known(f, seen, bind(Tag::backend, m.backend), bind(Tag::identity, m.identity));
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
    KC_TRY_ASSIGN(const bool binary, take(f, seen, bind(Tag::binary, m.binary)));
    has_binary = has_binary || binary;
    KC_TRY(rs.take(f, seen));
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

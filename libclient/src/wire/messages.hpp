// wire/messages.hpp — the typed messages of protocol v1 and their payload codecs.
//
// Contract:
//  * encode_* appends a payload (fields only; framing is wire/frame.hpp's job).
//  * decode_* validates as it goes: wrong widths, duplicated singular fields, a header_data
//    without its header_name, missing required fields → Errc::protocol naming the field.
//    Unknown tags are skipped so newer peers can add fields.
//  * Every reply starts with `status`; on an error it carries `message` (and `log` for compile
//    errors) and nothing else is meaningful.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/digest.hpp"
#include "kcache/result.hpp"

namespace kcache::wire {

struct HelloRequest {
  std::uint32_t proto_min = 1;
  std::uint32_t proto_max = 1;
  std::uint64_t capabilities = 0;
};

struct CompilerInfo {
  std::string backend;   // "cuda" | "hip"
  std::string identity;  // e.g. "nvrtc 13.0 (libnvrtc.so.13.0.88)"
};

struct HelloReply {
  std::uint32_t proto = 0;
  std::string daemon_version;
  std::uint64_t capabilities = 0;
  std::uint32_t max_frame = 0;
  std::vector<CompilerInfo> compilers;      // only the backends that are available
  std::vector<std::string> device_targets;  // compile target of device i
};

struct NamedHeader {
  std::string name;
  std::string data;
  friend bool operator==(const NamedHeader&, const NamedHeader&) = default;
};

struct GetRequest {
  std::string name;
  std::string version;
  std::string target;                 // empty: use `device`
  std::optional<std::uint32_t> device;
  std::optional<std::string> source;  // absent: name-only (provider) or key-only lookup
  std::vector<NamedHeader> headers;
  std::vector<std::string> options;
  std::optional<Digest128> key;       // client-computed cache key
  std::uint32_t flags = 0;            // kGetWantFd
  std::string system;                 // variant facts (JSON), may be empty
};

// `fallback` never crosses the wire: libkcache compiled in-process (client/fallback.hpp).
enum class Origin : std::uint8_t { provider, hit, compiled, fallback };
const char* origin_name(Origin o) noexcept;
std::optional<Origin> parse_origin(std::string_view s) noexcept;

// What a served path is: a module file, or a directory (a kernels build variant, a tree).
enum class PathKind : std::uint8_t { file = 0, directory = 1 };

struct ModuleReply {
  std::string path;
  PathKind path_kind = PathKind::file;
  std::uint64_t size = 0;
  Digest128 digest;
  Origin origin = Origin::hit;
  std::string target;
  Digest128 key;
};

// Generic error reply: every opcode's reply decodes as this when status != ok.
struct ErrorReply {
  Error error;
};

struct ControlReply {
  std::string json;
};

struct CompileJob {
  std::string backend;
  std::string identity;
  std::string target;
  std::string name;
  std::string source;
  std::vector<NamedHeader> headers;
  std::vector<std::string> options;
};

struct CompileResult {
  std::string binary;
  std::string log;
};

void encode(std::string& out, const HelloRequest& m);
void encode(std::string& out, const HelloReply& m);
void encode(std::string& out, const GetRequest& m);
void encode(std::string& out, const ModuleReply& m);
void encode(std::string& out, const ControlReply& m);
void encode(std::string& out, const CompileJob& m);
void encode(std::string& out, const CompileResult& m);
void encode_error(std::string& out, const Error& e);
// A request whose only content is a JSON document (control operations).
void encode_json_request(std::string& out, std::string_view json);

Result<HelloRequest> decode_hello_request(std::string_view payload);
// Counts a get may not exceed, checked field by field while decoding: a frame of millions of
// tiny options is refused (Errc::too_large naming the limit) at the first one over, before
// it costs memory or loop time. The daemon passes compile/request_rules.hpp's limits.
struct RepeatedLimits {
  std::size_t max_headers = SIZE_MAX;
  std::size_t max_options = SIZE_MAX;
};
Result<GetRequest> decode_get_request(std::string_view payload, const RepeatedLimits& limits = {});
Result<std::string> decode_json_request(std::string_view payload);
Result<CompileJob> decode_compile_job(std::string_view payload);

// Replies: an error status decodes to Result's error (status, message, log).
Result<HelloReply> decode_hello_reply(std::string_view payload);
Result<ModuleReply> decode_module_reply(std::string_view payload);
Result<ControlReply> decode_control_reply(std::string_view payload);
Result<CompileResult> decode_compile_result(std::string_view payload);
// Only the status of a reply (Errc::ok or the error), for interim frames.
Result<void> decode_status(std::string_view payload);

}  // namespace kcache::wire

#include "server/session.hpp"

#include <spdlog/spdlog.h>

#include "common/units.hpp"
#include "loop/contain.hpp"
#include "app/daemon.hpp"
#include "server/dispatch.hpp"
#include "kcache_config.h"
#include "wire/messages.hpp"

namespace kcache::daemon {

Session::Session(Daemon& daemon, std::uint64_t id, Fd fd, const ucred& peer)
    : daemon_(daemon), id_(id), peer_(peer),
      channel_(daemon.loop(), std::move(fd), daemon.config().max_frame,
               daemon.config().max_queued_per_client, wire::request_payload_limit),
      opened_ms_(uv_now(daemon.loop())) {}

Status Session::start() { return channel_.start(weak_from_this()); }

void Session::on_closed(const std::string& reason) {
  if (reason == "peer closed")
    spdlog::debug("session {} (pid {}) closed", id_, peer_.pid);
  else
    spdlog::info("session {} (pid {}, uid {}) closed: {}", id_, peer_.pid, peer_.uid, reason);
  daemon_.server().budget().add_buffered(peer_.uid, -static_cast<std::int64_t>(buffered_));
  buffered_ = 0;
  daemon_.server().forget(id_);
}

bool Session::may_take_frame() {
  const TurnBudget& budget = daemon_.server().budget();
  if (turn_ != budget.turn()) {
    turn_ = budget.turn();
    frames_this_turn_ = 0;
  }
  return frames_this_turn_ < TurnBudget::kFramesPerTurn && budget.may_run(peer_.uid);
}

void Session::wait_for_turn() {
  daemon_.server().budget().defer(weak_from_this(), frames_this_turn_ > 0);
}

Status Session::buffered_changed(std::size_t bytes) {
  TurnBudget& budget = daemon_.server().budget();
  budget.add_buffered(peer_.uid, static_cast<std::int64_t>(bytes) - static_cast<std::int64_t>(buffered_));
  const bool grew = bytes > buffered_;
  buffered_ = bytes;
  if (grew && !budget.buffered_ok(peer_.uid))
    return make_error(Errc::too_large, "uid " + std::to_string(peer_.uid) +
                                           " holds more than " + format_size(budget.buffered_cap()) +
                                           " in unfinished frames, the most one user may");
  return {};
}

void Session::reply(std::uint32_t request_id, wire::Opcode op, std::string frame,
                    std::uint16_t flags, Fd pass_fd) {
  if (channel_.closed()) return;
  wire::seal_frame(frame, static_cast<std::uint16_t>(op) | wire::kReplyBit, flags, request_id);
  channel_.send(std::move(frame), std::move(pass_fd));
}

void Session::reply_error(std::uint32_t request_id, wire::Opcode op, const Error& error) {
  std::string frame = wire::start_frame(64 + error.message.size() + error.log.size());
  wire::encode_error(frame, error);
  reply(request_id, op, std::move(frame));
}

void Session::reply_in_progress(std::uint32_t request_id, wire::Opcode op, const std::string& what) {
  std::string frame = wire::start_frame(32 + what.size());
  wire::encode_error(frame, make_error(Errc::in_progress, what));
  reply(request_id, op, std::move(frame), wire::kFlagInterim);
}

bool Session::acquire_slot() {
  if (pending_ >= daemon_.config().max_pending_per_client) return false;
  ++pending_;
  return true;
}

void Session::handle_hello(const wire::Frame& frame) {
  auto hello = wire::decode_hello_request(frame.payload);
  if (!hello.ok()) {
    channel_.close("bad hello: " + hello.error().message);
    return;
  }
  if (hello->proto_min > wire::kProtocolVersion || hello->proto_max < wire::kMinProtocolVersion) {
    reply_error(frame.header.request_id, wire::Opcode::hello,
                make_error(Errc::unsupported_version,
                           "client speaks protocol " + std::to_string(hello->proto_min) + ".." +
                               std::to_string(hello->proto_max) + ", kcached speaks " +
                               std::to_string(wire::kMinProtocolVersion) + ".." +
                               std::to_string(wire::kProtocolVersion)));
    return;
  }
  proto_ = std::min(hello->proto_max, wire::kProtocolVersion);
  wire::HelloReply r;
  r.proto = proto_;
  r.daemon_version = KCACHE_VERSION;
  r.capabilities = wire::kCapFdPassing | wire::kCapKeyLookup;
  r.max_frame = daemon_.config().max_frame;
  for (const auto& c : daemon_.compilers().all())
    if (c.available)  // the identity keys use, so clients compute the daemon's keys
      r.compilers.push_back({c.backend, c.identity + daemon_.include_roots().key_suffix()});
  for (const auto& d : daemon_.devices().devices()) r.device_targets.push_back(d.compile_target);
  std::string out = wire::start_frame();
  wire::encode(out, r);
  reply(frame.header.request_id, wire::Opcode::hello, std::move(out));
}

void Session::on_frame(const wire::Frame& frame) {
  ++frames_this_turn_;
  const std::uint64_t start = uv_hrtime();
  dispatch(frame);
  daemon_.server().budget().charge(peer_.uid, uv_hrtime() - start);
}

void Session::dispatch(const wire::Frame& frame) {
  const std::uint16_t raw = frame.header.opcode;
  if (proto_ == 0) {
    if (raw != static_cast<std::uint16_t>(wire::Opcode::hello)) {
      channel_.close("first frame is opcode " + std::to_string(raw) + ", not hello");
      return;
    }
    handle_hello(frame);
    return;
  }
  const auto info = wire::opcode_info(raw);
  const Handler handler = info ? find_handler(info->opcode) : nullptr;
  const auto op = static_cast<wire::Opcode>(raw);
  if (!info || handler == nullptr) {
    reply_error(frame.header.request_id, op,
                make_error(Errc::unknown_opcode, "unknown opcode 0x" + [&] {
                  char buf[8];
                  std::snprintf(buf, sizeof buf, "%04x", raw);
                  return std::string(buf);
                }()));
    return;
  }
  if (info->min_version > proto_) {
    reply_error(frame.header.request_id, op,
                make_error(Errc::unsupported_version,
                           std::string(info->name) + " needs protocol " +
                               std::to_string(info->min_version)));
    return;
  }
  // Supplementary groups are read only when they matter (an admin operation).
  if (info->permission == wire::Permission::admin &&
      !daemon_.is_admin(peer_, peer_groups(channel_.fd()))) {
    spdlog::warn("refused {} from uid {} (pid {}): not an admin", info->name, peer_.uid, peer_.pid);
    reply_error(frame.header.request_id, op,
                make_error(Errc::permission_denied, std::string("permission denied: ") +
                                                        info->name + " requires " +
                                                        daemon_.admin_policy().describe()));
    return;
  }
  // A handler that throws answers its request with an internal error; the daemon goes on.
  const bool handled = contain(info->name, [&] {
    handler(daemon_, shared_from_this(), frame.header.request_id, frame.payload);
  });
  if (!handled)
    reply_error(frame.header.request_id, op,
                make_error(Errc::internal, std::string("internal error handling ") + info->name +
                                               " (logged by kcached); the request was not done"));
}

}  // namespace kcache::daemon

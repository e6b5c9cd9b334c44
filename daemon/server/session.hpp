// session.hpp — one client connection: handshake, permission checks, dispatch, replies.
//
// Contract (loop thread only):
//  * The first frame must be `hello` (protocol version negotiation); anything else, or a
//    malformed frame, closes this connection with a logged reason. Other sessions are not
//    affected.
//  * Each opcode is checked against the table (schema/wire_v1.def): the negotiated version
//    must have it and the peer (SO_PEERCRED) must hold its permission; failures are error
//    replies naming the opcode, and the connection stays usable.
//  * Requests that finish later (compiles, queries) hold a quota slot: more than
//    `max_pending_per_client` at once get `busy`.
//  * `report` is accepted at most once per second per connection (take_report_turn()).
//  * Loop time and memory are shared by the server's TurnBudget (turn_budget.hpp): a session
//    hands over at most TurnBudget::kFramesPerTurn frames per loop turn and none while its
//    uid's share of the turn is spent; a uid whose unfinished frames pass the budget's cap
//    has the connection that would add more closed, with a reason naming the cap.
//  * Replies to a closed session are dropped.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>

#include "loop/channel.hpp"
#include "wire/frame.hpp"
#include "wire/protocol.hpp"

namespace kcache::daemon {

class Daemon;

class Session : public ChannelHandler, public std::enable_shared_from_this<Session> {
 public:
  Session(Daemon& daemon, std::uint64_t id, Fd fd, const ucred& peer);

  Status start();
  void close(const std::string& reason) { channel_.close(reason); }

  void on_frame(const wire::Frame& frame) override;
  void on_closed(const std::string& reason) override;
  bool may_take_frame() override;
  void wait_for_turn() override;
  Status buffered_changed(std::size_t bytes) override;
  void resume() { channel_.resume(); }

  // `frame` was made by wire::start_frame() and holds the payload; this seals and sends it.
  void reply(std::uint32_t request_id, wire::Opcode op, std::string frame,
             std::uint16_t flags = 0, Fd pass_fd = Fd());
  void reply_error(std::uint32_t request_id, wire::Opcode op, const Error& error);
  // The interim `in_progress` reply: the client waits with its long timeout from now on.
  void reply_in_progress(std::uint32_t request_id, wire::Opcode op, const std::string& what);

  // Quota for requests answered later. acquire fails (false) when the quota is exhausted.
  bool acquire_slot();
  void release_slot() noexcept {
    if (pending_ > 0) --pending_;
  }

  std::uint64_t id() const noexcept { return id_; }
  const ucred& peer() const noexcept { return peer_; }
  bool closed() const noexcept { return channel_.closed(); }
  bool greeted() const noexcept { return proto_ != 0; }
  std::size_t pending() const noexcept { return pending_; }
  const Channel& channel() const noexcept { return channel_; }
  std::uint64_t opened_ms() const noexcept { return opened_ms_; }
  // True at most once per second: a client reports after a reconnect, never in a loop.
  bool take_report_turn(std::uint64_t now_ms) noexcept {
    if (last_report_ms_ != 0 && now_ms < last_report_ms_ + 1000) return false;
    last_report_ms_ = now_ms;
    return true;
  }

 private:
  void handle_hello(const wire::Frame& frame);
  void dispatch(const wire::Frame& frame);

  Daemon& daemon_;
  std::uint64_t id_;
  ucred peer_;
  Channel channel_;
  std::uint32_t proto_ = 0;  // 0 until hello
  std::size_t pending_ = 0;
  std::uint64_t opened_ms_ = 0;  // uv_now at accept
  std::uint64_t last_report_ms_ = 0;
  std::uint64_t turn_ = 0;             // the loop turn frames_this_turn_ counts
  std::uint32_t frames_this_turn_ = 0;
  std::size_t buffered_ = 0;           // as last booked with the TurnBudget
};

}  // namespace kcache::daemon

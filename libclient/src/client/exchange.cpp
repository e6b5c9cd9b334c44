#include "client/exchange.hpp"

#include <string>

namespace kcache::client {

namespace {

Error timed_out(bool compiling, const Timeouts& t) {
  if (compiling)
    return make_error(Errc::timeout, "the compile did not finish within the compile timeout (" +
                                         std::to_string(ms(t.compile)) + " ms)");
  return make_error(Errc::timeout, "no reply from kcached within the request timeout (" +
                                       std::to_string(ms(t.request)) + " ms)");
}

}  // namespace

Result<wire::Frame> round_trip(Connection& conn, wire::Opcode op, std::uint32_t id,
                               std::string_view frame, const Timeouts& timeouts) {
  const std::size_t payload = frame.size() - wire::kHeaderSize;
  const std::uint32_t limit = conn.hello().max_frame;
  if (limit != 0 && payload > limit)
    return make_error(Errc::too_large, "request of " + std::to_string(payload) +
                                           " bytes exceeds the daemon's frame limit of " +
                                           std::to_string(limit) + " bytes");

  Deadline deadline = Clock::now() + timeouts.request;
  bool compiling = false;
  if (Status sent = conn.send(frame, deadline); !sent.ok()) {
    if (sent.error().code == Errc::timeout) return timed_out(false, timeouts);
    return std::move(sent).error();
  }

  const auto reply_opcode =
      static_cast<std::uint16_t>(static_cast<std::uint16_t>(op) | wire::kReplyBit);
  while (true) {
    auto received = conn.receive(deadline);
    if (!received.ok()) {
      if (received.error().code == Errc::timeout) return timed_out(compiling, timeouts);
      return std::move(received).error();
    }
    const wire::Frame& f = *received;
    if (f.header.opcode != reply_opcode || f.header.request_id != id) {
      conn.mark_broken();
      return make_error(Errc::protocol, "kcached sent opcode " + std::to_string(f.header.opcode) +
                                            " for request " + std::to_string(f.header.request_id) +
                                            " while request " + std::to_string(id) +
                                            " was waiting for its reply");
    }
    const Status status = wire::decode_status(f.payload);
    const bool in_progress = !status.ok() && status.error().code == Errc::in_progress;
    if ((f.header.flags & wire::kFlagInterim) == 0) {
      if (in_progress) {
        conn.mark_broken();
        return make_error(Errc::protocol, "kcached sent in_progress as a final reply");
      }
      return *received;
    }
    if (!status.ok() && status.error().code == Errc::protocol) {
      conn.mark_broken();
      return status.error();
    }
    if (in_progress) {
      compiling = true;
      deadline = Clock::now() + timeouts.compile;
    }
  }
}

}  // namespace kcache::client

// channel.hpp — a framed, non-blocking stream socket on the event loop.
//
// Used for client sessions and compile-worker pipes alike. Contract (loop thread only):
//  * Complete frames are delivered to the handler in order; a frame's payload is valid only
//    during on_frame. Malformed framing (an oversized header, for the channel's limit or the
//    opcode's) closes the channel with the reason; nothing else is affected.
//  * Flow control is the handler's (client sessions; worker pipes keep the defaults): before
//    each frame it is asked may_take_frame(); on no, the channel stops reading, calls
//    wait_for_turn(), and goes on when resume() is called. After every read and every batch
//    of frames it is told buffered_changed(bytes held); an error closes the channel with it.
//  * At most 256 KiB is read per wakeup, in 64 KiB reads: one peer's stream cannot hold the loop.
//  * send() queues a whole frame and writes as much as the socket takes right away (the hit
//    path costs one sendmsg). An fd given with a frame rides on its first byte (SCM_RIGHTS).
//  * When more than `max_queued` bytes wait for a peer that does not read, the channel stops
//    reading from it until the queue drains to half (backpressure instead of memory growth).
//  * It keeps the loop-time (uv_now, ms) of its last read, of its last write progress and of
//    the first byte of a frame still incomplete, for the server's hygiene sweep (server.hpp).
//  * close(reason) is idempotent; on_closed runs exactly once, synchronously. The handler is
//    held weakly; during a callback the channel keeps it alive.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "common/fd.hpp"
#include "loop/uv.hpp"
#include "wire/frame.hpp"

namespace kcache::daemon {

class ChannelHandler {
 public:
  virtual ~ChannelHandler() = default;
  virtual void on_frame(const wire::Frame& frame) = 0;
  virtual void on_closed(const std::string& reason) = 0;
  virtual bool may_take_frame() { return true; }
  virtual void wait_for_turn() {}
  virtual Status buffered_changed(std::size_t /*bytes*/) { return {}; }
};

class Channel {
 public:
  Channel(uv_loop_t* loop, Fd fd, std::uint32_t max_payload, std::size_t max_queued,
          wire::PayloadLimit limit = nullptr);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  Status start(std::weak_ptr<ChannelHandler> handler);
  void send(std::string frame, Fd pass_fd = Fd());
  void close(const std::string& reason);
  // Delivers the frames that waited for this turn, then reads on (see wait_for_turn).
  void resume();

  bool closed() const noexcept { return closed_; }
  int fd() const noexcept { return fd_.get(); }
  std::size_t queued_bytes() const noexcept { return queued_; }
  std::uint64_t last_read_ms() const noexcept { return last_read_ms_; }
  // When the oldest unsent reply last made progress (0: nothing queued).
  std::uint64_t queue_progress_ms() const noexcept { return queued_ > 0 ? last_write_ms_ : 0; }
  // When the frame now arriving began (0: no partial frame buffered).
  std::uint64_t partial_since_ms() const noexcept { return partial_since_ms_; }

 private:
  struct Outgoing {
    std::string bytes;
    std::size_t offset = 0;
    Fd fd;  // sent with the first byte, then closed
  };

  void on_poll(int status, int events);
  void read_available(ChannelHandler& handler);
  // Hands over buffered frames while the handler grants them; false if closed or waiting.
  bool deliver_frames(ChannelHandler& handler);
  bool report_buffered(ChannelHandler& handler);
  // Writes queued data; returns false if the channel closed.
  bool flush();
  void update_events();

  uv_loop_t* loop_;
  Fd fd_;
  UvHandle<uv_poll_t> poll_;
  wire::FrameReader reader_;
  std::deque<Outgoing> out_;
  std::size_t queued_ = 0;
  std::size_t max_queued_;
  std::weak_ptr<ChannelHandler> handler_;
  int events_ = 0;
  bool read_paused_ = false;
  bool waiting_turn_ = false;
  bool closed_ = false;
  std::uint64_t last_read_ms_ = 0;
  std::uint64_t last_write_ms_ = 0;
  std::uint64_t partial_since_ms_ = 0;
};

}  // namespace kcache::daemon

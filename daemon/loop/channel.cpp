#include "loop/channel.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstring>

#include "loop/contain.hpp"

namespace kcache::daemon {

namespace {
// Bytes read per wakeup before yielding to other connections (fairness).
constexpr std::size_t kReadBudget = 256u << 10;
constexpr std::size_t kReadChunk = 64u << 10;
}  // namespace

Channel::Channel(uv_loop_t* loop, Fd fd, std::uint32_t max_payload, std::size_t max_queued,
                 wire::PayloadLimit limit)
    : loop_(loop), fd_(std::move(fd)), reader_(max_payload, limit), max_queued_(max_queued) {}

Channel::~Channel() {
  if (!closed_) {
    handler_.reset();  // no callbacks from a destructor
    close("channel destroyed");
  }
}

Status Channel::start(std::weak_ptr<ChannelHandler> handler) {
  handler_ = std::move(handler);
  poll_ = UvHandle<uv_poll_t>::make();
  const int rc = uv_poll_init_socket(loop_, poll_.get(), fd_.get());
  if (rc != 0) return uv_error("uv_poll_init", rc);
  poll_->data = this;
  update_events();
  return {};
}

void Channel::update_events() {
  if (closed_) return;
  // Stop reading while the peer is not draining what we already owe it; resume at half.
  if (!read_paused_ && queued_ >= max_queued_) read_paused_ = true;
  if (read_paused_ && queued_ <= max_queued_ / 2) read_paused_ = false;
  const int events = (read_paused_ || waiting_turn_ ? 0 : UV_READABLE) | (out_.empty() ? 0 : UV_WRITABLE);
  if (events == events_) return;
  events_ = events;
  if (events == 0) {
    uv_poll_stop(poll_.get());
    return;
  }
  uv_poll_start(poll_.get(), events, [](uv_poll_t* p, int status, int ev) {
    if (p->data != nullptr) contain("Channel::on_poll", [&] { static_cast<Channel*>(p->data)->on_poll(status, ev); });
  });
}

void Channel::on_poll(int status, int events) {
  auto handler = handler_.lock();  // keeps the owner (and so this channel) alive
  if (!handler) return;
  if (status < 0) {
    close(std::string("poll error: ") + uv_strerror(status));
    return;
  }
  if ((events & UV_WRITABLE) != 0 && !flush()) return;
  if ((events & UV_READABLE) != 0) read_available(*handler);
  update_events();
}

void Channel::read_available(ChannelHandler& handler) {
  std::size_t budget = kReadBudget;
  while (deliver_frames(handler) && budget > 0) {
    auto prepared = reader_.prepare(kReadChunk);
    if (!prepared.ok()) {
      close(prepared.error().message);
      return;
    }
    const std::span<char> space = *prepared;
    const ssize_t n = ::recv(fd_.get(), space.data(), std::min(space.size(), kReadChunk), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      close(std::string("read error: ") + std::strerror(errno));
      return;
    }
    if (n == 0) {
      close(reader_.buffered() > 0 ? "peer closed mid-frame" : "peer closed");
      return;
    }
    reader_.commit(static_cast<std::size_t>(n));
    last_read_ms_ = uv_now(loop_);
    if (partial_since_ms_ == 0) partial_since_ms_ = last_read_ms_;
    budget -= std::min(budget, static_cast<std::size_t>(n));
    if (!report_buffered(handler)) return;
    if (static_cast<std::size_t>(n) < kReadChunk) {  // drained the socket
      deliver_frames(handler);
      return;
    }
  }
}

bool Channel::deliver_frames(ChannelHandler& handler) {
  bool delivered = false;
  while (!closed_ && reader_.frame_ready()) {
    if (!handler.may_take_frame()) {
      waiting_turn_ = true;
      handler.wait_for_turn();
      break;
    }
    auto next = reader_.next();
    if (!next.ok()) {
      close("protocol error: " + next.error().message);
      return false;
    }
    delivered = true;
    handler.on_frame(**next);
  }
  if (closed_) return false;
  if (reader_.buffered() == 0) partial_since_ms_ = 0;
  if (delivered && !report_buffered(handler)) return false;
  return !waiting_turn_;
}

bool Channel::report_buffered(ChannelHandler& handler) {
  if (auto ok = handler.buffered_changed(reader_.buffered()); !ok.ok()) {
    close(ok.error().message);
    return false;
  }
  return !closed_;
}

void Channel::resume() {
  if (closed_ || !waiting_turn_) return;
  auto handler = handler_.lock();
  if (!handler) return;
  waiting_turn_ = false;
  read_available(*handler);
  update_events();
}

void Channel::send(std::string frame, Fd pass_fd) {
  if (closed_) return;
  if (queued_ == 0) last_write_ms_ = uv_now(loop_);  // the stall clock starts now
  queued_ += frame.size();
  out_.push_back(Outgoing{std::move(frame), 0, std::move(pass_fd)});
  if (out_.size() == 1 && !flush()) return;
  update_events();
}

bool Channel::flush() {
  while (!out_.empty()) {
    Outgoing& o = out_.front();
    iovec iov{o.bytes.data() + o.offset, o.bytes.size() - o.offset};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (o.fd) {
      std::memset(control, 0, sizeof control);
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      const int fd = o.fd.get();
      std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    const ssize_t n = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      close(std::string("write error: ") + std::strerror(errno));
      return false;
    }
    o.fd.reset();  // the kernel holds its own reference once any byte went out
    last_write_ms_ = uv_now(loop_);
    o.offset += static_cast<std::size_t>(n);
    queued_ -= static_cast<std::size_t>(n);
    if (o.offset == o.bytes.size()) out_.pop_front();
  }
  return true;
}

void Channel::close(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  if (poll_) {
    uv_poll_stop(poll_.get());
    poll_.reset();
  }
  fd_.reset();
  out_.clear();
  queued_ = 0;
  if (auto handler = handler_.lock()) handler->on_closed(reason);
}

}  // namespace kcache::daemon

// echo_floor.hpp — the physical floor of a hit: N client processes ping-ponging fixed-size
// messages over Unix sockets with one single-threaded epoll echo server process (kcached's
// shape — one event-loop thread — minus everything kcached does per request).
//
// Contract: `echo_floor(clients, count, request_size, reply_size)` runs clients × count round
// trips, released together after every client is connected, and returns `summarize()` of the
// per-round-trip latencies. Aborts on a socket error (a broken floor is not a number).
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

namespace kcache::bench {

nlohmann::json echo_floor(int clients, int count, std::size_t request_size, std::size_t reply_size);

}  // namespace kcache::bench

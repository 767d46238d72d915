// Kernel channels between two threads of this process: a pair of pipes, a Unix socketpair, a
// Unix stream socket through listen/accept, TCP over 127.0.0.1. Each end is a descriptor to read
// and one to write (the same one for sockets). TCP_NODELAY is judged by reading it back from the
// kernel, not by what was asked for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "simdex/lab/validity.h"

namespace simdex::lab {

enum class channel_kind { pipe, socketpair, unix_stream, tcp };
const char* channel_name(channel_kind k);  // "pipe", "socketpair", "unix stream", "TCP loopback"

struct channel_end {
  int read_fd = -1, write_fd = -1;
};

// Both ends of a channel; closes its descriptors. Throws std::runtime_error with the failing
// call and errno when the kernel refuses.
class channel {
 public:
  // `nodelay` is applied to both TCP ends (ignored for the others).
  channel(channel_kind kind, bool nodelay);
  ~channel();
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;

  channel_kind kind() const { return kind_; }
  bool nodelay_requested() const { return nodelay_; }
  channel_end a, b;

 private:
  channel_kind kind_;
  bool nodelay_;
};

// The whole buffer, retrying short transfers and EINTR; false at end of file or on an error.
bool write_all(int fd, const void* p, std::size_t n);
bool read_all(int fd, void* p, std::size_t n);

// TCP_NODELAY of a TCP socket as the kernel reports it: 1, 0, or -1 when it cannot say.
int tcp_nodelay(int fd);
// "nodelay": a TCP channel's ends report the TCP_NODELAY it was asked for (other kinds pass).
check nodelay(const std::string& what, const channel& c);

}  // namespace simdex::lab

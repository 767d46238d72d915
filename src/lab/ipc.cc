#include "simdex/lab/ipc.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "enum_names.h"

namespace simdex::lab {
namespace {

[[noreturn]] void fail(const char* call) {
  throw std::runtime_error(std::string("channel: ") + call + ": " + std::strerror(errno));
}

int checked(int rc, const char* call) {
  if (rc < 0) fail(call);
  return rc;
}

// A listening socket of `family`, a client connected to it and the accepted end.
void connect_pair(int family, int& client, int& server) {
  int listener = checked(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket");
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&addr);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    in->sin_port = 0;  // any free port
    len = sizeof(sockaddr_in);
  } else {
    // Linux's abstract namespace: no file to create or clean up.
    auto* un = reinterpret_cast<sockaddr_un*>(&addr);
    un->sun_family = AF_UNIX;
    int n = std::snprintf(un->sun_path + 1, sizeof un->sun_path - 1, "simdex-lab-%d-%p",
                          static_cast<int>(getpid()), static_cast<void*>(&addr));
    len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  }
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int e = errno;
    close(listener);
    errno = e;
    fail("bind/listen");
  }
  client = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client < 0 || connect(client, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    int e = errno;
    if (client >= 0) close(client);
    close(listener);
    errno = e;
    fail("connect");
  }
  server = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  int e = errno;
  close(listener);
  if (server < 0) {
    close(client);
    errno = e;
    fail("accept");
  }
}

}  // namespace

int tcp_nodelay(int fd) {
  int v = 0;
  socklen_t len = sizeof v;
  if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len) != 0) return -1;
  return v ? 1 : 0;
}

const char* channel_name(channel_kind k) {
  return enum_name(k, {"pipe", "socketpair", "unix stream", "TCP loopback"});
}

channel::channel(channel_kind kind, bool nodelay) : kind_(kind), nodelay_(nodelay) {
  switch (kind) {
    case channel_kind::pipe: {
      int ab[2], ba[2];
      checked(pipe2(ab, O_CLOEXEC), "pipe2");
      if (pipe2(ba, O_CLOEXEC) != 0) {
        close(ab[0]);
        close(ab[1]);
        fail("pipe2");
      }
      a = {ba[0], ab[1]};
      b = {ab[0], ba[1]};
      break;
    }
    case channel_kind::socketpair: {
      int sv[2];
      checked(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair");
      a = {sv[0], sv[0]};
      b = {sv[1], sv[1]};
      break;
    }
    case channel_kind::unix_stream:
    case channel_kind::tcp: {
      int client = -1, server = -1;
      connect_pair(kind == channel_kind::tcp ? AF_INET : AF_UNIX, client, server);
      a = {client, client};
      b = {server, server};
      if (kind == channel_kind::tcp) {
        int v = nodelay ? 1 : 0;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v);
        setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v);
      }
      break;
    }
  }
}

channel::~channel() {
  // A socket end reads and writes through one descriptor: close each descriptor once.
  int fds[4] = {a.read_fd, a.write_fd, b.read_fd, b.write_fd};
  for (int i = 0; i < 4; ++i) {
    bool dup = false;
    for (int j = 0; j < i; ++j) dup |= fds[j] == fds[i];
    if (fds[i] >= 0 && !dup) close(fds[i]);
  }
}

namespace {

// Repeats a partial read or write until all n bytes moved; false on end of file or an error.
template <class Byte, class Io>
bool move_all(Byte* c, std::size_t n, Io io) {
  while (n > 0) {
    ssize_t k = io(c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

}  // namespace

bool write_all(int fd, const void* p, std::size_t n) {
  return move_all(static_cast<const char*>(p), n,
                  [fd](const char* c, std::size_t m) { return ::write(fd, c, m); });
}

bool read_all(int fd, void* p, std::size_t n) {
  return move_all(static_cast<char*>(p), n,
                  [fd](char* c, std::size_t m) { return ::read(fd, c, m); });
}

check nodelay(const std::string& what, const channel& c) {
  if (c.kind() != channel_kind::tcp)
    return {"nodelay", check_status::pass, what + ": not TCP, no Nagle algorithm to switch off"};
  // Read back now, not at construction: whatever changed the sockets since shows.
  int want = c.nodelay_requested() ? 1 : 0, client = tcp_nodelay(c.a.write_fd),
      server = tcp_nodelay(c.b.write_fd);
  std::string got = "TCP_NODELAY reads " + std::to_string(client) + " (client) and " +
                    std::to_string(server) + " (server)";
  if (client == want && server == want)
    return {"nodelay", check_status::pass,
            what + ": " + got + ", as asked (" + std::to_string(want) + ")"};
  return {"nodelay", check_status::fail,
          what + ": " + got + ", asked for " + std::to_string(want) +
              ": the figure is not for the setting it is labelled with"};
}

}  // namespace simdex::lab

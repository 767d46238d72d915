// Kernel channels carry messages both ways, and TCP_NODELAY is judged by what the kernel reports,
// so a socket whose setting was changed behind the label fails.
#include "simdex/lab/ipc.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <thread>

namespace {

using namespace simdex::lab;

TEST(LabIpc, EveryChannelCarriesBothWays) {
  for (auto k : {channel_kind::pipe, channel_kind::socketpair, channel_kind::unix_stream,
                 channel_kind::tcp}) {
    channel c(k, true);
    std::thread echo([&] {
      std::uint64_t v = 0;
      for (int i = 0; i < 100; ++i) {
        ASSERT_TRUE(read_all(c.b.read_fd, &v, sizeof v));
        v += 1;
        ASSERT_TRUE(write_all(c.b.write_fd, &v, sizeof v));
      }
    });
    for (std::uint64_t i = 0; i < 100; ++i) {
      std::uint64_t v = 2 * i;
      ASSERT_TRUE(write_all(c.a.write_fd, &v, sizeof v)) << channel_name(k);
      ASSERT_TRUE(read_all(c.a.read_fd, &v, sizeof v)) << channel_name(k);
      EXPECT_EQ(v, 2 * i + 1) << channel_name(k);
    }
    echo.join();
    EXPECT_EQ(nodelay(channel_name(k), c).status, check_status::pass);
  }
}

TEST(LabIpc, NodelayReadBack) {
  channel on(channel_kind::tcp, true), off(channel_kind::tcp, false);
  EXPECT_EQ(tcp_nodelay(on.a.write_fd), 1);
  EXPECT_EQ(tcp_nodelay(off.b.write_fd), 0);
  EXPECT_EQ(nodelay("on", on).status, check_status::pass);
  EXPECT_EQ(nodelay("off", off).status, check_status::pass);
}

// The broken variant: a channel labelled TCP_NODELAY whose server end has Nagle back on.
TEST(LabIpc, NodelayNotInForceFails) {
  channel c(channel_kind::tcp, true);
  int zero = 0;
  ASSERT_EQ(setsockopt(c.b.write_fd, IPPROTO_TCP, TCP_NODELAY, &zero, sizeof zero), 0);
  auto k = nodelay("labelled TCP_NODELAY", c);
  EXPECT_EQ(k.status, check_status::fail);
  EXPECT_NE(k.detail.find("asked for 1"), std::string::npos) << k.detail;
}

TEST(LabIpc, ReadAllSeesEndOfFile) {
  channel c(channel_kind::socketpair, false);
  std::uint64_t v = 7;
  ASSERT_TRUE(write_all(c.a.write_fd, &v, 4));  // half a message, then the writer goes away
  shutdown(c.a.write_fd, SHUT_WR);
  EXPECT_FALSE(read_all(c.b.read_fd, &v, sizeof v));
}

}  // namespace

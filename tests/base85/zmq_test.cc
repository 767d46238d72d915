// Z85 against libzmq's zmq_z85_encode/zmq_z85_decode (whole groups; libzmq has no tails).
#include <gtest/gtest.h>

#include <cstring>

#include "helpers.h"
#if SIMDEX_TEST_HAVE_ZMQ
#include <zmq.h>
#endif

using namespace simdex::base85;
using namespace simdex::base85::testing;

TEST(Base85Zmq, MatchesLibzmq) {
#if !SIMDEX_TEST_HAVE_ZMQ
  GTEST_SKIP() << "libzmq (libzmq3-dev) not found at build time";
#else
  std::mt19937_64 g(5);
  for (std::size_t n = 0; n <= 2048; n += 4) {
    std::vector<std::uint8_t> data = random_bytes(n, g);
    std::string theirs(n / 4 * 5 + 1, '\0');
    ASSERT_NE(zmq_z85_encode(theirs.data(), data.data(), n), nullptr);
    theirs.resize(n / 4 * 5);
    ASSERT_EQ(enc(data, eo(variant::z85)), theirs);
    std::vector<std::uint8_t> back(n + 1);
    if (n > 0) {  // newer libzmq rejects the empty string
      ASSERT_NE(zmq_z85_decode(back.data(), theirs.c_str()), nullptr);
      ASSERT_EQ(0, std::memcmp(back.data(), data.data(), n));
    }
    ASSERT_EQ(dec(theirs, doo(variant::z85)), std::string(data.begin(), data.end()));
  }
  std::uint8_t hw[8];
  ASSERT_NE(zmq_z85_decode(hw, "HelloWorld"), nullptr);
  EXPECT_EQ(enc(std::span<const std::uint8_t>(hw, 8), eo(variant::z85)), "HelloWorld");
#endif
}

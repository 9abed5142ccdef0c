// The device's shared HBM (engines/hbm.hpp): max-min fair sharing of its bandwidth among the streams in flight,
// each capped by its own rate. Every expected finish is worked out beside it.
#include <gtest/gtest.h>

#include "neuronsim/engines/hbm.hpp"

using neuronsim::engines::HbmShare;

// A stream alone moves at its cap: trn2's 16 DMA engines, 16 x 27.2 = 435.2 B/ns, on a 2900 B/ns device:
// 2 MiB = 2097152 B in 2097152 / 435.2 = 4818.75 ns after its start.
TEST(HbmShare, AStreamAloneMovesAtItsCap) {
  HbmShare h;
  h.reset(2900.0);
  const int a = h.add(0.0, 1300.0, 2097152.0, 435.2);
  EXPECT_DOUBLE_EQ(h.finish_ns(a), 1300.0 + 2097152.0 / 435.2);
  EXPECT_TRUE(h.uncontended(a));
}

// Eight such streams at once ask for 8 x 435.2 = 3481.6 > 2900 B/ns: each gets 2900 / 8 = 362.5 B/ns and all end
// 2097152 / 362.5 = 5785.2469 ns after their start. Six at once (6 x 435.2 = 2611.2 <= 2900) keep their cap.
TEST(HbmShare, StreamsShareTheDeviceOnceTheirCapsSumAboveIt) {
  for (int n : {6, 8}) {
    HbmShare h;
    h.reset(2900.0);
    std::vector<int> s;
    for (int i = 0; i < n; ++i) s.push_back(h.add(0.0, 0.0, 2097152.0, 435.2));
    const double want = n == 8 ? 2097152.0 / 362.5 : 2097152.0 / 435.2;
    for (int x : s) {
      EXPECT_NEAR(h.finish_ns(x), want, 1e-6) << n;
      EXPECT_EQ(h.uncontended(x), n == 6) << n;
    }
    EXPECT_DOUBLE_EQ(h.bytes(), n * 2097152.0);
  }
}

// Water-filling: on 100 B/ns, caps 10, 100 and 100 get 10, 45 and 45 (the small cap keeps its rate, the other two
// share the remaining 90). Bytes 100, 900, 450: the first ends at 100 / 10 = 10 ns; by then the others moved 450
// each: the third ends at 10 too, and the second, alone, has 450 left at its cap 100: 10 + 450 / 100 = 14.5 ns.
TEST(HbmShare, ASmallCapKeepsItsRateAndTheOthersShareTheRest) {
  HbmShare h;
  h.reset(100.0);
  const int a = h.add(0, 0, 100, 10), b = h.add(0, 0, 900, 100), c = h.add(0, 0, 450, 100);
  EXPECT_NEAR(h.finish_ns(a), 10.0, 1e-9);
  EXPECT_NEAR(h.finish_ns(c), 10.0, 1e-9);
  EXPECT_NEAR(h.finish_ns(b), 14.5, 1e-9);
  EXPECT_TRUE(h.uncontended(a));
  EXPECT_FALSE(h.uncontended(b));
}

// A later arrival slows a stream in flight: on 100 B/ns, A (1000 B, cap 100) alone from 0 projects 10 ns; B
// (200 B, cap 100) entered at 3 ns starts at 5: A moved 500 B alone, then both get 50 B/ns: B ends at 5 + 200 / 50
// = 9 ns, A has 1000 - 500 - 200 = 300 B left and ends at 9 + 300 / 100 = 12 ns.
TEST(HbmShare, ALaterArrivalMakesTheProjectionLater) {
  HbmShare h;
  h.reset(100.0);
  const int a = h.add(0, 0, 1000, 100);
  EXPECT_NEAR(h.finish_ns(a), 10.0, 1e-9);
  EXPECT_TRUE(h.uncontended(a));
  const int b = h.add(3, 5, 200, 100);
  EXPECT_NEAR(h.finish_ns(b), 9.0, 1e-9);
  EXPECT_NEAR(h.finish_ns(a), 12.0, 1e-9);
  EXPECT_FALSE(h.uncontended(a));
  // Released streams free their slot once done; a new stream after them runs alone.
  h.release(a);
  h.release(b);
  const int c = h.add(20, 20, 100, 100);
  EXPECT_NEAR(h.finish_ns(c), 21.0, 1e-9);
  EXPECT_TRUE(h.uncontended(c));
}

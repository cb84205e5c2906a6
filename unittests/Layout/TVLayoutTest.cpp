//===- TVLayoutTest.cpp - Tests for thread-value layouts ------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Layout/TVLayout.h"

#include "TestUtils.h"

using namespace quack::layout;
using namespace quack::layout::test;

namespace {

RowPartition rowConfig(int64_t numCols, int64_t threadsPerRow, int64_t vec,
                       int64_t rows, int64_t cluster = 1) {
  RowPartition c;
  c.numCols = numCols;
  c.threadsPerRow = threadsPerRow;
  c.vecSize = vec;
  c.rowsPerCta = rows;
  c.clusterSize = cluster;
  return c;
}

TEST(MakeLayoutTV, InvertsTheRakedProduct) {
  // 2 rows of 2 threads, each thread a 1x2 vector: a 2x4 tile.
  Layout thr = L("(2,2):(2,1)"), val = L("(1,2):(0,1)");
  Result<TVTile> tv = makeLayoutTV(thr, val);
  ASSERT_TRUE(tv.ok()) << tv.error();
  EXPECT_EQ(tv->tileShape.str(), "(2,4)");
  EXPECT_EQ(tv->tv.str(), "((2,2),2):((4,1),2)");
  Layout tile = *rakedProduct(thr, val);
  int64_t numThreads = thr.size();
  for (int64_t t = 0; t < numThreads; ++t)
    for (int64_t v = 0; v < val.size(); ++v)
      EXPECT_EQ(tile(tv->tv(t + numThreads * v)), t + numThreads * v);
}

TEST(MakeLayoutTV, ColumnMajorThreadsAndBlocks) {
  // CuTe's classic: 32x8 threads (column-major), 4x1 values each: a 128x8
  // tile where thread t owns 4 consecutive rows of one column.
  Layout thr = L("(32,8):(1,32)"), val = L("(4,1):(1,0)");
  Result<TVTile> tv = makeLayoutTV(thr, val);
  ASSERT_TRUE(tv.ok()) << tv.error();
  EXPECT_EQ(tv->tileShape.str(), "(128,8)");
  // Thread modes (32, 8) coalesce because 32 threads x 4 values fill a
  // column: thread t, value v is tile index 4t + v.
  EXPECT_EQ(tv->tv.str(), "(256,4):(4,1)");
  Layout tile = *rakedProduct(thr, val);
  for (int64_t i = 0; i < 1024; ++i)
    EXPECT_EQ(tile(tv->tv(i)), i);
}

TEST(MakeLayoutTV, RejectsNonBijectiveThreadLayouts) {
  Result<TVTile> tv = makeLayoutTV(L("(2,2):(2,2)"), L("(1,2):(0,1)"));
  EXPECT_FALSE(tv.ok());
}

TEST(RowTVLayout, SmallExampleFromTheHeader) {
  Result<RowTVLayout> r = makeRowTVLayout(rowConfig(8, 2, 2, 2));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->tv.str(), "((2,2,1),(2,2)):((2,8,0),(1,4))");
  EXPECT_EQ(r->tile.str(), "(2,8):(8,1)");
  EXPECT_EQ(r->tileCols, 8);
  EXPECT_EQ(r->numThreads, 4);
  EXPECT_EQ(r->valuesPerThread, 4);
  // Thread 1 owns columns 2,3 and 6,7 of row 0.
  EXPECT_EQ((*r)(1, 0), 2);
  EXPECT_EQ((*r)(1, 1), 3);
  EXPECT_EQ((*r)(1, 2), 6);
  EXPECT_EQ((*r)(1, 3), 7);
  // Thread 2 is the first thread of row 1.
  EXPECT_EQ((*r)(2, 0), 8);
  // Hierarchical evaluation: ((t, row, cta), (v, j)).
  EXPECT_EQ(*r->tv.evaluate(parseIntTuple("((1,1,0),(1,1))").value()), 8 + 7);
}

TEST(RowTVLayout, QuackConfigurations) {
  // N = 4096 bf16 with 128-bit vectors, 128 threads per row, one row per CTA.
  Result<RowTVLayout> a = makeRowTVLayout(rowConfig(4096, 128, 8, 1));
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->tv.str(), "((128,1,1),(8,4)):((8,0,0),(1,1024))");
  // N = 1024 fp32: 32 threads per row, 4 rows per CTA.
  Result<RowTVLayout> b = makeRowTVLayout(rowConfig(1024, 32, 4, 4));
  ASSERT_TRUE(b.ok()) << b.error();
  EXPECT_EQ(b->tv.str(), "((32,4,1),(4,8)):((4,1024,0),(1,128))");
  // N = 65536 bf16 split over a cluster of 4 CTAs of 256 threads.
  Result<RowTVLayout> c = makeRowTVLayout(rowConfig(65536, 256, 8, 1, 4));
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->tv.str(), "((256,1,4),(8,8)):((8,0,16384),(1,2048))");
  EXPECT_EQ(c->colsPerCta, 16384);
}

/// The intended partitioning, written out with index arithmetic.
int64_t expectedIndex(const RowTVLayout &r, const RowPartition &c,
                      int64_t thread, int64_t value) {
  int64_t tInRow = thread % c.threadsPerRow;
  int64_t row = (thread / c.threadsPerRow) % c.rowsPerCta;
  int64_t cta = thread / (c.threadsPerRow * c.rowsPerCta);
  int64_t elem = value % c.vecSize, vector = value / c.vecSize;
  int64_t col = cta * r.colsPerCta +
                (vector * c.threadsPerRow + tInRow) * c.vecSize + elem;
  return row * r.tileCols + col;
}

TEST(RowTVLayout, MatchesTheIntendedPartitioningForManyConfigs) {
  int configs = 0;
  for (int64_t tpr : {1, 2, 4, 8, 16, 32, 64, 128, 256})
    for (int64_t vec : {1, 2, 4, 8})
      for (int64_t rows : {1, 2, 3, 4})
        for (int64_t cluster : {1, 2, 4})
          for (int64_t n : {8, 96, 1000, 4096}) {
            RowPartition c = rowConfig(n, tpr, vec, rows, cluster);
            Result<RowTVLayout> r = makeRowTVLayout(c);
            ASSERT_TRUE(r.ok()) << r.error();
            ++configs;
            EXPECT_GE(r->tileCols, n);
            EXPECT_EQ(r->tileCols % (tpr * vec * cluster), 0);
            EXPECT_LT(r->tileCols - n, tpr * vec * cluster);
            ASSERT_EQ(r->tv.size(), rows * r->tileCols);
            for (int64_t t = 0; t < r->numThreads; ++t)
              for (int64_t v = 0; v < r->valuesPerThread; ++v)
                ASSERT_EQ((*r)(t, v), expectedIndex(*r, c, t, v))
                    << "N=" << n << " tpr=" << tpr << " vec=" << vec
                    << " rows=" << rows << " cluster=" << cluster
                    << " tv=" << r->tv.str();
          }
  EXPECT_EQ(configs, 9 * 4 * 4 * 3 * 4);
}

TEST(RowTVLayout, EveryElementHasExactlyOneOwner) {
  Result<RowTVLayout> r = makeRowTVLayout(rowConfig(96, 4, 4, 3, 2));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(isInjective(r->tv));
  auto owners = tvOwners(r->tv, r->tile.size());
  ASSERT_TRUE(owners.ok());
  for (const auto &o : *owners)
    EXPECT_TRUE(o.has_value());
  // The owners agree with the algebraic inverse of the TV layout.
  Layout inverse = rightInverse(r->tv);
  ASSERT_EQ(inverse.size(), r->tile.size());
  for (int64_t i = 0; i < inverse.size(); ++i)
    EXPECT_EQ(inverse(i),
              (*owners)[i]->thread + r->numThreads * (*owners)[i]->value);
}

TEST(RowTVLayout, WarpAccessesAreContiguous) {
  // 32 consecutive threads of a row read 32 consecutive vectors.
  Result<RowTVLayout> r = makeRowTVLayout(rowConfig(8192, 128, 8, 1));
  ASSERT_TRUE(r.ok());
  for (int64_t j = 0; j < r->vecsPerThread; ++j)
    for (int64_t warp = 0; warp < 4; ++warp) {
      int64_t first = (*r)(warp * 32, j * 8);
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t e = 0; e < 8; ++e)
          EXPECT_EQ((*r)(warp * 32 + lane, j * 8 + e), first + lane * 8 + e);
    }
}

TEST(RowTVLayout, InvalidParameters) {
  Result<RowTVLayout> r = makeRowTVLayout(rowConfig(4096, 0, 8, 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "makeRowTVLayout: numCols (4096), threadsPerRow (0), "
                       "vecSize (8), rowsPerCta (1) and clusterSize (1) must "
                       "all be positive");
  EXPECT_FALSE(makeRowTVLayout(rowConfig(0, 32, 8, 1)).ok());
  EXPECT_FALSE(makeRowTVLayout(rowConfig(64, 32, 8, 1, -2)).ok());
  EXPECT_FALSE(
      makeRowTVLayout(rowConfig(int64_t(1) << 62, 32, 8, 1 << 20)).ok());
}

TEST(TVOwners, BroadcastAndUnownedElements) {
  // Four threads all hold the same two elements (stride-0 thread mode).
  auto owners = tvOwners(L("(4,2):(0,1)"), 3);
  ASSERT_TRUE(owners.ok());
  EXPECT_EQ((*owners)[0], (ThrVal{0, 0}));
  EXPECT_EQ((*owners)[1], (ThrVal{0, 1}));
  EXPECT_FALSE((*owners)[2].has_value());
  Result<std::vector<std::optional<ThrVal>>> bad = tvOwners(L("8:1"), 8);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(),
            "tvOwners: expected a rank-2 (thread, value) layout, got 8:1");
}

} // namespace

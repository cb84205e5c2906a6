//===- TensorBoxTest.cpp - the boxes of tensor copies ---------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/Transforms/KernelConfig.h"

#include "gtest/gtest.h"

using namespace mlir::quack;

namespace {

/// (inner, groups) of the box, or (0, 0) where there is none.
std::pair<int64_t, int64_t> box(int64_t n, int64_t cols, int64_t rows,
                                int64_t bytes) {
  std::optional<TensorBox> b = getTensorBox(n, cols, rows, bytes);
  return b ? std::make_pair(b->inner, b->groups) : std::make_pair(0L, 0L);
}

TEST(TensorBox, OneBoxHoldsASliceOfUpTo65536Columns) {
  // 256 columns innermost, as many groups of them as the slice has.
  EXPECT_EQ(box(4096, 4096, 1, 2), std::make_pair(256L, 16L));
  EXPECT_EQ(box(65536, 16384, 1, 2), std::make_pair(256L, 64L));
  EXPECT_EQ(box(1024, 1024, 2, 2), std::make_pair(256L, 4L));
  EXPECT_EQ(getTensorBox(4096, 4096, 1, 4)->columns(), 4096);
}

TEST(TensorBox, InnerDimensionDividesN) {
  // 1000 = 8 x 125: boxes of 8 columns (16 bytes of bf16); the slice of
  // 1024 columns is 128 groups, the last 3 past N (zero-filled).
  EXPECT_EQ(box(1000, 1024, 1, 2), std::make_pair(8L, 128L));
  // 20000 = 32 x 625, f32: 32 columns, a slice of 6144 is 192 groups.
  EXPECT_EQ(box(20000, 6144, 1, 4), std::make_pair(32L, 192L));
}

TEST(TensorBox, SeveralBoxesAre128ByteAligned) {
  // 3000 = 8 x 375, bf16, a slice of 3072 columns of 2 rows: 384 groups of
  // 8 do not fit one box (at most 256); 192 groups make two boxes of 6144
  // bytes.
  EXPECT_EQ(box(3000, 3072, 2, 2), std::make_pair(8L, 192L));
  // Boxes of 8 x 128 groups x 1 row of bf16 would be 2048 bytes; of 8 x
  // 192 x 1, 3072: both aligned; the widest divisor wins.
  EXPECT_EQ(box(3000, 3072, 1, 2), std::make_pair(8L, 192L));
}

TEST(TensorBox, NoneWhereNoInnerDimensionSpans16Bytes) {
  // 1001 is odd: no power of two above 1 divides it, and 2 bytes of bf16
  // are under 16.
  EXPECT_FALSE(getTensorBox(1001, 1024, 1, 2).has_value());
  // 4 f32 columns (16 bytes) divide 1004.
  EXPECT_EQ(box(1004, 1024, 1, 4), std::make_pair(4L, 256L));
}

} // namespace

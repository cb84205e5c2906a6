//===- CompileMemoTest.cpp - what the retries of one compile share --------===//
//
// Part of the quack project.
//
// The register caps a CTAs-per-SM search found spilling are shared with a
// retry that lowers alike (all but the exponential's flush-to-zero) and
// needs at least as many registers unbounded, and with no other; the CTA
// count a running retry must exceed to be kept is held while it runs.
//
//===----------------------------------------------------------------------===//

#include "CompileMemo.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

#include <set>

namespace {

TEST(CompileMemo, SpilledCapsReachTheExactExponentialRetryOnly) {
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy("kernel k"), llvm::SMLoc());
  EXPECT_EQ(quack::CompileMemo::active(), nullptr);
  {
    quack::CompileMemo::Scope scope(sourceMgr, id, context);
    quack::CompileMemo *memo = quack::CompileMemo::active();
    ASSERT_NE(memo, nullptr);

    quack::CompileOptions ftz;
    ftz.bindings = {{"T", "f32"}, {"N", "65536"}};
    quack::CompileOptions exact = ftz;
    exact.expFtz = 0;
    EXPECT_TRUE(memo->capsKnownToSpill(exact, 80).empty());

    memo->storeSpilledCaps(ftz, 80, {48, 64});
    const std::set<int64_t> both = {48, 64};
    EXPECT_EQ(memo->capsKnownToSpill(exact, 80), both);
    EXPECT_EQ(memo->capsKnownToSpill(exact, 96), both);
    // Fewer registers unbounded than the compile that spilled: the caps are
    // tried again.
    EXPECT_TRUE(memo->capsKnownToSpill(exact, 72).empty());
    // Another lowering (rows kept packed across exchanges) shares nothing.
    quack::CompileOptions packed = ftz;
    packed.remat = 1;
    EXPECT_TRUE(memo->capsKnownToSpill(packed, 80).empty());
    // Several searches of one lowering: the caps of each that needed no
    // more registers.
    memo->storeSpilledCaps(ftz, 90, {56});
    EXPECT_EQ(memo->capsKnownToSpill(exact, 80), both);
    EXPECT_EQ(memo->capsKnownToSpill(exact, 90),
              (std::set<int64_t>{48, 56, 64}));

    // The floor a retry must exceed, while it runs; a retry nested in it
    // keeps the higher floor and gives the outer one back.
    EXPECT_EQ(memo->searchFloor(), 0);
    {
      quack::CompileMemo::FloorScope outer(memo, 3);
      EXPECT_EQ(memo->searchFloor(), 3);
      {
        quack::CompileMemo::FloorScope lower(memo, 2);
        EXPECT_EQ(memo->searchFloor(), 3);
        quack::CompileMemo::FloorScope higher(memo, 5);
        EXPECT_EQ(memo->searchFloor(), 5);
      }
      EXPECT_EQ(memo->searchFloor(), 3);
    }
    EXPECT_EQ(memo->searchFloor(), 0);
    // No memo: nothing to raise.
    { quack::CompileMemo::FloorScope none(nullptr, 4); }

    // A retry of the same input reuses the memo.
    quack::CompileMemo::Scope retry(sourceMgr, id, context);
    EXPECT_EQ(quack::CompileMemo::active(), memo);
  }
  EXPECT_EQ(quack::CompileMemo::active(), nullptr);
}

} // namespace

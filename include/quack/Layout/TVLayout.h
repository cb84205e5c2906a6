//===- TVLayout.h - Thread-value layouts ------------------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// A thread-value (TV) layout is a rank-2 layout (thread, value) -> index of
// an element in a tile: mode 0 enumerates threads, mode 1 the values (the
// registers) each thread holds. Evaluate it with tv(thread + T * value),
// where T = size(mode 0), or with tv.evaluate((thread, value)).
//
// The row kernels' partitioning is built from the algebra (raked product,
// right inverse, logical product, composition), not from index arithmetic.
// For threadsPerRow = 2, vecSize = 2, rowsPerCta = 2 and 8 columns, the
// row-major 2x8 tile is owned like this (TtVv = thread t, value v):
//
//          c0   c1   c2   c3   c4   c5   c6   c7
//   row 0  T0V0 T0V1 T1V0 T1V1 T0V2 T0V3 T1V2 T1V3
//   row 1  T2V0 T2V1 T3V0 T3V1 T2V2 T2V3 T3V2 T3V3
//
// Thread t of a row's group owns vectors t, t + threadsPerRow, ... of vecSize
// consecutive elements, so a warp's vector accesses are contiguous; the rows
// of a CTA belong to consecutive thread groups.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LAYOUT_TVLAYOUT_H
#define QUACK_LAYOUT_TVLAYOUT_H

#include "quack/Layout/Layout.h"
#include "quack/Layout/Result.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace quack {
namespace layout {

/// A TV layout together with the shape of the tile it partitions.
struct TVTile {
  /// (thread, value) -> colexicographic (column-major) index of the element
  /// in a tile of shape `tileShape`.
  Layout tv;
  /// The tile's shape, e.g. (M, N).
  IntTuple tileShape;
};

/// CuTe's make_layout_tv: threads arranged by `thr` ((m,n) of the thread grid
/// -> thread index) each own a block of values arranged by `val` ((m,n) in
/// the block -> value index). The tile is rakedProduct(thr, val) and the TV
/// layout is its right inverse reshaped to (size(thr), size(val)). Both
/// layouts must be compact bijections of the same rank (at most 2 matter).
Result<TVTile> makeLayoutTV(const Layout &thr, const Layout &val);

/// Parameters of the row partitioning of a (rowsPerCta x numCols) tile.
struct RowPartition {
  /// Elements in a row (N).
  int64_t numCols = 0;
  /// Threads that cooperate on one row.
  int64_t threadsPerRow = 0;
  /// Elements per vector access (8 for 16-bit data and 128-bit accesses).
  int64_t vecSize = 0;
  /// Rows a CTA owns at once.
  int64_t rowsPerCta = 0;
  /// CTAs of a cluster that split each row (each owns a contiguous chunk).
  int64_t clusterSize = 1;
};

/// The row partitioning of a tile among the threads of a CTA (or cluster).
///
/// The tile is row-major with `tileCols` columns: element (r, c) has index
/// r * tileCols + c. tileCols = clusterSize * colsPerCta is numCols rounded up
/// to a multiple of vecSize * threadsPerRow * clusterSize; columns >= numCols
/// are padding that kernels mask. CTA k of the cluster owns columns
/// [k * colsPerCta, (k + 1) * colsPerCta).
///
/// `tv` has shape ((threadsPerRow, rowsPerCta, clusterSize), (vecSize,
/// vecsPerThread)). The linear thread id is t + threadsPerRow * r +
/// threadsPerCta * k for thread t of row r of CTA k (so within a CTA the
/// threads of one row are consecutive); the linear value id is v + vecSize *
/// j for element v of the thread's j-th vector.
struct RowTVLayout {
  /// (thread, value) -> r * tileCols + c.
  Layout tv;
  /// (r, c) -> r * tileCols + c, i.e. (rowsPerCta, tileCols):(tileCols, 1).
  Layout tile;
  int64_t rows = 0;
  int64_t tileCols = 0;
  int64_t colsPerCta = 0;
  int64_t threadsPerCta = 0;
  int64_t numThreads = 0; ///< threadsPerCta * clusterSize.
  int64_t valuesPerThread = 0;
  int64_t vecsPerThread = 0;

  /// The tile index of value `value` of (cluster-wide) thread `thread`.
  int64_t operator()(int64_t thread, int64_t value) const {
    return tv(thread + numThreads * value);
  }
};

/// Builds the row partitioning from the layout algebra; fails on
/// non-positive parameters.
Result<RowTVLayout> makeRowTVLayout(const RowPartition &config);

/// A (thread, value) pair.
struct ThrVal {
  int64_t thread = 0;
  int64_t value = 0;
  bool operator==(const ThrVal &o) const {
    return thread == o.thread && value == o.value;
  }
};

/// For each index in [0, codomainSize), the (thread, value) of a rank-2 TV
/// layout that holds it: for elements held by several threads (stride-0
/// modes), the lowest thread and then its lowest value; std::nullopt for
/// indices no thread holds. Indices outside the range are ignored. Fails
/// when `tv` is not rank 2 or codomainSize is negative.
Result<std::vector<std::optional<ThrVal>>> tvOwners(const Layout &tv,
                                                    int64_t codomainSize);

} // namespace layout
} // namespace quack

#endif // QUACK_LAYOUT_TVLAYOUT_H

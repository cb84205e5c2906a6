//===- TVLayout.cpp - Thread-value layouts --------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Layout/TVLayout.h"
#include "Detail.h"

using namespace quack::layout;

Result<TVTile> quack::layout::makeLayoutTV(const Layout &thr,
                                           const Layout &val) {
  // The tile: each thread's block of values, raked across the thread grid.
  Result<Layout> tileToTV = rakedProduct(thr, val);
  if (!tileToTV)
    return Error{"makeLayoutTV: " + tileToTV.error()};
  // Invert it: (thread + numThreads * value) -> colexicographic tile index.
  Layout inverse = rightInverse(*tileToTV);
  int64_t numThreads = thr.size(), numValues = val.size();
  if (inverse.size() != numThreads * numValues)
    return Error{"makeLayoutTV: thread layout " + thr.str() +
                 " and value layout " + val.str() +
                 " do not tile a compact region one-to-one"};
  Result<Layout> tv =
      withShape(inverse, IntTuple::tuple({numThreads, numValues}));
  if (!tv)
    return Error{"makeLayoutTV: " + tv.error()};
  return TVTile{std::move(*tv), productEach(tileToTV->getShape())};
}

Result<RowTVLayout> quack::layout::makeRowTVLayout(const RowPartition &c) {
  if (c.numCols < 1 || c.threadsPerRow < 1 || c.vecSize < 1 ||
      c.rowsPerCta < 1 || c.clusterSize < 1)
    return Error{"makeRowTVLayout: numCols (" + std::to_string(c.numCols) +
                 "), threadsPerRow (" + std::to_string(c.threadsPerRow) +
                 "), vecSize (" + std::to_string(c.vecSize) +
                 "), rowsPerCta (" + std::to_string(c.rowsPerCta) +
                 ") and clusterSize (" + std::to_string(c.clusterSize) +
                 ") must all be positive"};
  detail::CheckedMath math;
  int64_t passCols = math.mul(c.vecSize, c.threadsPerRow);
  int64_t clusterPass = math.mul(passCols, c.clusterSize);
  if (math.overflow)
    return Error{"makeRowTVLayout: parameters overflow 64 bits"};
  int64_t vecsPerThread = (c.numCols + clusterPass - 1) / clusterPass;
  int64_t colsPerCta = math.mul(passCols, vecsPerThread);
  int64_t tileCols = math.mul(colsPerCta, c.clusterSize);
  int64_t threadsPerCta = math.mul(c.threadsPerRow, c.rowsPerCta);
  math.mul(math.mul(tileCols, c.rowsPerCta), 2);
  if (math.overflow)
    return Error{"makeRowTVLayout: the tile does not fit in 64-bit indices"};

  // One pass: a (rowsPerCta x threadsPerRow) grid of threads, threads of a
  // row consecutive, each owning a 1 x vecSize vector.
  Layout thr(IntTuple::tuple({c.rowsPerCta, c.threadsPerRow}),
             IntTuple::tuple({c.threadsPerRow, 1}));
  Layout val(IntTuple::tuple({1, c.vecSize}), IntTuple::tuple({0, 1}));
  Result<TVTile> pass = makeLayoutTV(thr, val);
  if (!pass)
    return Error{"makeRowTVLayout: " + pass.error()};

  // Repeat the pass tile across the columns: vecsPerThread passes per CTA,
  // then one chunk per CTA of the cluster. The pass tile is a bijection onto
  // its colexicographic tile indices, so repetition j lands at columns
  // [j * passCols, (j + 1) * passCols) of the (rows x tileCols) tile.
  Layout repeats(IntTuple::tuple({vecsPerThread, c.clusterSize}),
                 IntTuple::tuple({1, vecsPerThread}));
  Result<Layout> product = logicalProduct(pass->tv, repeats);
  if (!product)
    return Error{"makeRowTVLayout: " + product.error()};
  // Regroup ((thr, vec), (pass, cta)) as ((thr, cta), (vec, pass)).
  Layout passTV = product->mode(0), reps = product->mode(1);
  Layout coordTV = makeLayout({makeLayout({passTV.mode(0), reps.mode(1)}),
                               makeLayout({passTV.mode(1), reps.mode(0)})});

  // Colexicographic tile index -> row-major index r * tileCols + c.
  Layout tile(IntTuple::tuple({c.rowsPerCta, tileCols}),
              IntTuple::tuple({tileCols, 1}));
  Result<Layout> indexTV = composition(tile, coordTV);
  if (!indexTV)
    return Error{"makeRowTVLayout: " + indexTV.error()};
  IntTuple shape = IntTuple::tuple(
      {IntTuple::tuple({c.threadsPerRow, c.rowsPerCta, c.clusterSize}),
       IntTuple::tuple({c.vecSize, vecsPerThread})});
  Result<Layout> tv = withShape(*indexTV, shape);
  if (!tv)
    return Error{"makeRowTVLayout: " + tv.error()};

  RowTVLayout result;
  result.tv = std::move(*tv);
  result.tile = tile;
  result.rows = c.rowsPerCta;
  result.tileCols = tileCols;
  result.colsPerCta = colsPerCta;
  result.threadsPerCta = threadsPerCta;
  result.numThreads = threadsPerCta * c.clusterSize;
  result.vecsPerThread = vecsPerThread;
  result.valuesPerThread = c.vecSize * vecsPerThread;
  return result;
}

Result<std::vector<std::optional<ThrVal>>>
quack::layout::tvOwners(const Layout &tv, int64_t codomainSize) {
  if (tv.getShape().isLeaf() || tv.rank() != 2)
    return Error{"tvOwners: expected a rank-2 (thread, value) layout, got " +
                 tv.str()};
  if (codomainSize < 0)
    return Error{"tvOwners: negative codomain size"};
  std::vector<std::optional<ThrVal>> owners(codomainSize);
  int64_t numThreads = tv.mode(0).size(), numValues = tv.mode(1).size();
  for (int64_t t = 0; t < numThreads; ++t)
    for (int64_t v = 0; v < numValues; ++v) {
      int64_t index = tv(t + numThreads * v);
      if (index >= 0 && index < codomainSize && !owners[index])
        owners[index] = ThrVal{t, v};
    }
  return owners;
}

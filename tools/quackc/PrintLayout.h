//===- PrintLayout.h - quackc --print-layout --------------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Draws a layout as a text grid (and optionally as SVG) from the command
// line, so that a layout can be read as a picture without writing code.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_TOOLS_QUACKC_PRINTLAYOUT_H
#define QUACK_TOOLS_QUACKC_PRINTLAYOUT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace quack {

/// Parses `layoutText` and prints its text grid to `out`; also writes an SVG
/// picture to `svgPath` when it is not empty. The accepted forms are
///
///   (4,8):(8,1)                    a layout in CuTe notation (rank 1 or 2;
///                                  a bare shape is compact column-major)
///   Sw<3,3,3> o (8,64):(64,1)      a swizzled layout (text grid only)
///   tv:N=64,threads=8,vec=4,rows=2[,cluster=2]
///                                  the row partitioning of makeRowTVLayout
///   tv:(2,(2,2)):(2,(1,4)), tile = (2,4):(4,1)
///                                  a (thread, value) layout over a tile, as
///                                  in #quack.tv_layout
///
/// Returns 0 on success; otherwise reports `quackc: error: ...` on stderr and
/// returns 1.
int printLayoutCommand(llvm::StringRef layoutText, llvm::StringRef svgPath,
                       llvm::raw_ostream &out);

} // namespace quack

#endif // QUACK_TOOLS_QUACKC_PRINTLAYOUT_H

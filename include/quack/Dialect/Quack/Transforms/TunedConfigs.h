//===- TunedConfigs.h - measured configs per architecture ---------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// The per-architecture tables in kernels/tuning/ record, for catalogue
// kernels, the split of a row over threads that a measurement on the GPU
// found faster than quack-select-config's model. They are compiled into the
// compiler; quack-select-config consults them before its model.
//
// A table is text, one entry per line, `#` starting a comment:
//
//   <kernel> <element bytes> <N> <vectors per thread> <rows per CTA>
//       [<cluster> [<copy> [<stages> [sums=<K>] | prefetch]]]
//
// An entry applies to the kernel of that name whose widest matrix or
// row-vector element has that many bytes, for every N in (N/2, N] (N is a
// power of two). Without a cluster size (or with 1) it is for the CTA-level
// path; with a cluster size C > 1 (rows per CTA then 1) it splits each row
// over a cluster of C CTAs. A copy path (`global`, `bulk`, `tensor`)
// overrides config selection's rule; a stage count after `bulk` or
// `tensor` makes the kernel a loop that copies the next rows into that many
// shared-memory buffers ahead of the one it computes on; `prefetch` after
// `global` makes it a loop over rows that loads the next rows into
// registers while it computes on the current ones. `sums=<K>` after the
// stages keeps the partial sums of the kernel's last K sums over rows in
// shared memory (the others in registers; a kernel with K sums or fewer
// keeps them all in registers), as the entry was measured;
// quackc then keeps the entry's loop where ptxas spills at most 32 bytes
// (kTableSpillBytes in lib/Compiler/Compiler.cpp) instead of searching for
// another config.
//
// GPUs of one architecture can want different splits (an H100's HBM3 and
// an H200's HBM3e differ in bandwidth and latency). An architecture's
// table holds the configs measured on its reference GPU; a tuning target
// adds a table measured on another model of that architecture, whose
// entries take precedence for the kernels they name when a compile asks
// for that target (quackc --tuning=h100). A bundle compiled for a target
// records it, with the device name it serves, so that the runtime picks
// its variants on such a device and the architecture's on any other.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_TRANSFORMS_TUNEDCONFIGS_H
#define QUACK_DIALECT_QUACK_TRANSFORMS_TUNEDCONFIGS_H

#include "quack/Dialect/Quack/Transforms/KernelConfig.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::quack {

struct TunedConfig {
  std::string kernel;
  int64_t elementBytes = 0;
  int64_t rowLength = 0;
  int64_t vectorsPerThread = 0;
  int64_t rowsPerCta = 0;
  /// CTAs of the cluster that splits a row; 1 on the CTA-level path.
  int64_t clusterSize = 1;
  /// The measured copy path (a seventh column, `global`, `bulk` or
  /// `tensor`); absent: config selection's rule decides.
  std::optional<KernelConfig::Copy> copy;
  /// Shared-memory buffers of a prefetching loop (an eighth column, 2 to 8,
  /// after a bulk or tensor copy path); 0: config selection decides.
  int64_t stages = 0;
  /// A loop over rows that loads the next rows into registers (an eighth
  /// column `prefetch`, after the copy path `global`).
  bool prefetch = false;
  /// The last K sums over rows with their partial sums in shared memory (a
  /// ninth column `sums=K`, after the stages); 0: registers, unless quackc
  /// finds that they spill.
  int64_t sharedSums = 0;
  /// Line of the entry in its table, for --print-config.
  int64_t line = 0;
  /// File name of the table the entry comes from (e.g. "sm_90.tsv"), set by
  /// lookupTunedConfig.
  StringRef table;
};

/// A GPU model of an architecture with a table of its own.
struct TuningTarget {
  /// What quackc --tuning names it by, e.g. "h100".
  StringRef name;
  /// The devices it serves: those whose name (cuDeviceGetName) contains
  /// this text, e.g. "H100".
  StringRef deviceName;
  /// The table's file name in kernels/tuning/, e.g. "sm_90-h100.tsv".
  StringRef table;
  /// The table's text, compiled in.
  StringRef text;
};

/// Parses a table; on a malformed line, returns an error naming it.
FailureOr<std::vector<TunedConfig>> parseTunedConfigs(StringRef text,
                                                      std::string &error);

/// The built-in table's file name for `arch` (sm_90 and sm_90a share
/// "sm_90.tsv"), or an empty string where there is none.
StringRef tunedConfigTableName(StringRef arch);

/// The tuning targets of `arch` (none where it has no table).
ArrayRef<TuningTarget> tuningTargets(StringRef arch);

/// The tuning target of `arch` named `name`, or null.
const TuningTarget *findTuningTarget(StringRef arch, StringRef name);

/// The end of the message refusing an unknown tuning target of `arch`:
/// "; known: h100", or " (it has none)".
std::string knownTuningTargets(StringRef arch);

/// The text of the built-in table for `arch`, or with `target` the text of
/// that target's table (empty where there is none).
StringRef builtinTunedConfigText(StringRef arch, StringRef target = "");

/// The entry for this kernel, element size and N: with a tuning `target`,
/// the target's entry where its table has one, else the entry of the
/// built-in table of `arch`, if any.
std::optional<TunedConfig> lookupTunedConfig(StringRef arch, StringRef kernel,
                                             int64_t elementBytes,
                                             int64_t rowLength,
                                             StringRef target = "");

} // namespace mlir::quack

#endif // QUACK_DIALECT_QUACK_TRANSFORMS_TUNEDCONFIGS_H

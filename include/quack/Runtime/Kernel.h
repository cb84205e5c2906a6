//===- Kernel.h - Load and launch a compiled kernel -------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A compiled kernel: its metadata and cubin image, loaded into each CUDA
/// context that launches it. The CUDA driver is opened at run time, only when
/// a kernel is first prepared or launched with rows to process.
///
//===----------------------------------------------------------------------===//

#ifndef QUACK_RUNTIME_KERNEL_H
#define QUACK_RUNTIME_KERNEL_H

#include "quack/Runtime/KernelMetadata.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace quack {
namespace runtime {

/// A kernel read from its metadata file and cubin. Thread-safe.
class Kernel {
public:
  /// Reads and validates the metadata at \p metadataPath and reads the cubin
  /// it names (beside it). Does not touch the CUDA driver.
  static Status load(const std::string &metadataPath,
                     std::unique_ptr<Kernel> &result, std::string &error);

  /// Builds a kernel from metadata text and an image already in memory; the
  /// image is a cubin, a fatbin or NUL-terminated PTX text.
  static Status create(const std::string &metadataText, std::vector<char> image,
                       std::unique_ptr<Kernel> &result, std::string &error);

  ~Kernel();
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

  const KernelMetadata &getMetadata() const { return variants.front().meta; }
  /// The smaller-cluster variants read from the metadata's
  /// "cluster_fallbacks" (largest first; empty for kernels built by
  /// create()).
  size_t getNumFallbacks() const { return variants.size() - 1; }
  const std::string &getPath() const { return path; }

  /// Loads the module into the calling thread's current CUDA context (the
  /// device's primary context, made current, when there is none), unless it
  /// is there already. Call this before capturing a CUDA graph.
  Status prepare(std::string &error);

  /// The variant that serves the current context (loading it like
  /// prepare()): its cluster size, and why it is not the kernel's own
  /// (empty when it is). A cluster the device cannot co-schedule, or one
  /// above $QUACK_RT_MAX_CLUSTER_SIZE, falls back to the largest of the
  /// metadata's "cluster_fallbacks" that it can.
  Status getVariantInUse(unsigned &clusterSize, std::string &note,
                         std::string &error);

  /// Bytes of workspace a launch with \p m rows needs (0 for kernels without
  /// sums over rows): the f32 partial sums of a persistent grid sized for
  /// the current context's device. Loads the module like prepare().
  Status getWorkspaceBytes(int64_t m, uint64_t &bytes, std::string &error);

  /// Launches on \p stream (a CUstream; null is the legacy default stream)
  /// in the current context. \p args holds one value per parameter after M,
  /// in metadata order; a workspace argument must point to at least
  /// getWorkspaceBytes(m) bytes, 16-byte aligned, that no other launch uses
  /// at the same time. A kernel with sums over rows runs its finishing
  /// entry point after it on the same stream (with \p m = 0, only that one:
  /// the sums are zeros). Otherwise launches nothing when \p m is 0. Refuses to load a
  /// module while the stream is capturing a graph.
  Status launch(int64_t m, const ArgValue *args, size_t numArgs, void *stream,
                std::string &error);

private:
  Kernel();

  struct Loaded;
  /// A compiled form of the kernel: its own, or one on a smaller cluster.
  struct Variant {
    KernelMetadata meta;
    std::vector<char> image;
  };
  /// Returns the function for the current context, loading it if needed.
  Status getFunction(void *stream, const Loaded *&result, std::string &error);
  /// Loads \p variant into the current context as \p l. Sets
  /// \p clusterRefused when the only obstacle is the variant's cluster.
  Status loadVariant(const Variant &variant, int device, Loaded &l,
                     bool &clusterRefused, std::string &error);
  Status launchMain(const Loaded *l, int64_t m, unsigned gridX,
                    const ArgValue *args, size_t numArgs, void *stream,
                    std::string &error);
  /// The finishing entry point of a persistent kernel, after a main grid
  /// of \p gridX CTAs (0: no rows were processed).
  Status launchFinish(const Loaded *l, unsigned gridX, const ArgValue *args,
                      void *stream, std::string &error);

  /// The kernel's own variant first, then its fallbacks, largest cluster
  /// first.
  std::vector<Variant> variants;
  std::string path;
  std::mutex mutex;
  /// One entry per CUDA context the kernel was loaded into.
  std::vector<std::unique_ptr<Loaded>> loaded;
};

} // namespace runtime
} // namespace quack

#endif // QUACK_RUNTIME_KERNEL_H

//===- RuntimeTestKernels.h - Kernel metadata the runtime tests share -----===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// The metadata of a small test kernel (y = alpha * x over rows of N = 64),
// its variants on a cluster, and a scratch directory for metadata and cubin
// files: what the C API tests (driver absent), the launch tests (against
// the stand-in driver) and the metadata tests build on.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_UNITTESTS_RUNTIME_RUNTIMETESTKERNELS_H
#define QUACK_UNITTESTS_RUNTIME_RUNTIMETESTKERNELS_H

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace quack_test {

/// y = alpha * x over rows of N = 64 in f32: two rows per CTA of 64 x 2
/// threads, 1 KB of dynamic shared memory.
inline const char *const scaleMetadata = R"({
  "schema": 1, "kernel": "scale", "symbol": "scale_kernel",
  "cubin": "scale.cubin", "arch": "sm_90",
  "bindings": {"N": 64, "T": "f32"},
  "params": [
    {"name": "M", "kind": "rows", "type": "i64"},
    {"name": "x", "kind": "matrix", "role": "input", "dtype": "f32"},
    {"name": "x.row_stride", "kind": "row_stride", "of": "x", "type": "i64"},
    {"name": "alpha", "kind": "scalar", "role": "input", "type": "f32"},
    {"name": "y", "kind": "matrix", "role": "output", "dtype": "f32"},
    {"name": "y.row_stride", "kind": "row_stride", "of": "y", "type": "i64"}
  ],
  "N": 64, "alignment": 16,
  "grid": {"kind": "rows", "rows_per_cta": 2},
  "block": [64, 2, 1], "cluster": [1, 1, 1],
  "shared_bytes": {"static": 0, "dynamic": 1024},
  "hash": "abc123"
})";

/// \p text with its first \p from replaced by \p to (a test failure where
/// there is none).
inline std::string replaced(std::string text, const std::string &from,
                            const std::string &to) {
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos)
    text.replace(pos, from.size(), to);
  return text;
}

/// scaleMetadata on a cluster of \p size (one row per cluster), naming
/// \p cubin and, when given, cluster fallbacks.
inline std::string clusterMetadata(unsigned size, const std::string &cubin,
                                   const std::string &fallbacks = "") {
  const std::string c = std::to_string(size);
  std::string text =
      replaced(scaleMetadata, R"("rows_per_cta": 2})",
               R"("rows_per_cta": 1, "ctas_per_rows": )" + c + "}");
  text = replaced(text, R"("cluster": [1, 1, 1],)",
                  "\"cluster\": [" + c + ", 1, 1]," +
                      (fallbacks.empty()
                           ? ""
                           : " \"cluster_fallbacks\": [" + fallbacks + "],"));
  return replaced(text, "\"scale.cubin\"", "\"" + cubin + "\"");
}

/// A scratch directory removed at the end of the test.
class TempDir {
public:
  TempDir() {
    char pattern[] = "/tmp/quack-rt-test-XXXXXX";
    const char *dir = mkdtemp(pattern);
    path = dir ? dir : "/tmp";
  }
  ~TempDir() {
    for (const std::string &f : files)
      std::remove(f.c_str());
    rmdir(path.c_str());
  }
  std::string write(const std::string &name, const std::string &text) {
    std::string file = path + "/" + name;
    std::ofstream(file, std::ios::binary) << text;
    files.push_back(file);
    return file;
  }
  std::string path;

private:
  std::vector<std::string> files;
};

} // namespace quack_test

#endif // QUACK_UNITTESTS_RUNTIME_RUNTIMETESTKERNELS_H

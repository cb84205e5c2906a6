//===- FuzzSupport.h - shared pieces of the MLIR-based fuzzers --*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_FUZZ_FUZZSUPPORT_H
#define QUACK_FUZZ_FUZZSUPPORT_H

#include "quack/Frontend/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

/// LLVM's BumpPtrAllocator poisons and unpoisons its slabs for ASan in
/// inline code: quack's instrumented code poisons, Debian's uninstrumented
/// libMLIR allocates from the same slabs without unpoisoning, and ASan then
/// reports a use-after-poison that is not a bug. Ignore manual poisoning;
/// every other ASan check stays on.
extern "C" __attribute__((used)) const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

namespace quack::fuzz {

/// Counts error diagnostics and swallows all of them (printing thousands of
/// them per second would dominate the run). Set QUACK_FUZZ_VERBOSE=1 to see
/// them, e.g. when reproducing a crash.
class DiagnosticCounter {
public:
  explicit DiagnosticCounter(mlir::MLIRContext *context)
      : handler(context, [this](mlir::Diagnostic &diag) {
          if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
            ++errors;
          if (verbose())
            std::fprintf(stderr, "%s\n", diag.str().c_str());
          return mlir::success();
        }) {}
  unsigned errors = 0;

  static bool verbose() {
    static bool v = std::getenv("QUACK_FUZZ_VERBOSE") != nullptr;
    return v;
  }

private:
  mlir::ScopedDiagnosticHandler handler;
};

/// A failure that reported no error is a bug: callers could not tell the
/// user what went wrong.
inline void checkReported(bool failed, const DiagnosticCounter &diags,
                          const char *what) {
  if (failed && diags.errors == 0) {
    std::fprintf(stderr, "fuzzer: %s failed without an error diagnostic\n",
                 what);
    std::abort();
  }
}

/// Bindings for every compile-time parameter of `file`'s kernels, picked from
/// a seed: a flag gets true or false, a parameter used as an element type a
/// dtype, any other an integer (mostly valid row lengths, sometimes odd or
/// invalid ones); one in sixteen gets a value of the wrong kind.
inline Bindings pickBindings(const qk::File &file, uint64_t seed) {
  static const char *const dtypes[] = {"bf16", "f16", "f32", "bf16",
                                       "f64",  "i32", "T",   ""};
  static const char *const ints[] = {"64",   "4096", "1",     "2",
                                     "1000", "3",    "65536", "262144",
                                     "0",    "-1",   "N",     "99999999999"};
  Bindings bindings;
  for (const qk::Kernel &k : file.kernels) {
    for (const qk::GenericParam &g : k.generics) {
      bool isType = false;
      for (const qk::Param &p : k.params)
        isType |= p.type.element == g.name;
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      unsigned r = seed >> 33;
      // Mostly the kind the parameter needs; now and then the wrong one.
      bool wrongKind = r % 16 == 0;
      r /= 16;
      if (g.isFlag && !wrongKind)
        bindings[g.name] = r % 2 ? "true" : "false";
      else if (isType != wrongKind)
        bindings[g.name] = dtypes[r % 4 == 0 ? r / 4 % 8 : r % 3];
      else
        bindings[g.name] = ints[r % 4 == 0 ? r / 4 % 12 : r % 2];
    }
  }
  if (DiagnosticCounter::verbose())
    for (const auto &[name, value] : bindings)
      std::fprintf(stderr, "binding: -D %s=%s\n", name.c_str(), value.c_str());
  return bindings;
}

/// FNV-1a over the input: the binding seed.
inline uint64_t hashBytes(const uint8_t *data, size_t size) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 1099511628211ULL;
  return h;
}

} // namespace quack::fuzz

#endif // QUACK_FUZZ_FUZZSUPPORT_H

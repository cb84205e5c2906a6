#===- FuzzFlags.cmake - instrumentation for the libFuzzer build -*- cmake -*-===#
#
# Included by the top-level CMakeLists.txt before the libraries, so that the
# code under test (layout library, dialect, front end, compiler) carries
# libFuzzer's coverage instrumentation and the sanitizers. Only clang has
# libFuzzer; with another compiler the option is switched off with a warning.
#
# Use a build directory of its own (scripts/fuzz.sh uses build-fuzz/): every
# quack library in it is instrumented.
#
#===----------------------------------------------------------------------===#

if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(WARNING "QUACK_ENABLE_FUZZERS needs clang (libFuzzer); "
                  "${CMAKE_CXX_COMPILER_ID} found, fuzzers are not built")
  set(QUACK_ENABLE_FUZZERS OFF)
  return()
endif()

set(QUACK_FUZZ_SANITIZERS "address,undefined" CACHE STRING
    "Sanitizers for the fuzz build (-fsanitize=...), besides libFuzzer")
message(STATUS "Fuzz build: -fsanitize=fuzzer-no-link,${QUACK_FUZZ_SANITIZERS}")

# LLVM/MLIR come from Debian: built with gcc and not instrumented. ASan and
# UBSan only see quack's code; that gives no false positives (libstdc++ does
# not annotate containers unless asked), but bugs inside libMLIR itself are
# found only when they crash.
add_compile_options(
  -fsanitize=fuzzer-no-link,${QUACK_FUZZ_SANITIZERS}
  -fno-sanitize-recover=undefined
  -fno-omit-frame-pointer
  -gline-tables-only)
add_link_options(-fsanitize=${QUACK_FUZZ_SANITIZERS})

#!/usr/bin/env python3
"""Writes a stand-in kernel bundle for testing the runtime and the Python
package on a GPU before (or besides) quackc's own bundles.

The kernels are plain CUDA C++ compiled by nvcc, one symbol per variant in one
cubin, and follow docs/abi.md exactly (entry-point parameters, metadata,
index.json). They are simple, not fast: numbers measured with them say
nothing about quackc's kernels. Some variants also exercise the runtime's
less common launch paths: a cluster launch (f32, N=4096) and a dynamic
shared memory size above 48 KB (f16, N=8192).

    python3 reference_bundle.py OUT_DIR [--nvcc nvcc] [--arch sm_90]
"""

import argparse
import json
import os
import subprocess
import sys

TYPES = {"bf16": ("__nv_bfloat16", 2), "f16": ("__half", 2),
         "f32": ("float", 4)}
NS = (1, 7, 1000, 1024, 4096, 8192, 16384)

PRELUDE = r"""
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ float toF(float v) { return v; }
__device__ __forceinline__ float toF(__half v) { return __half2float(v); }
__device__ __forceinline__ float toF(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <typename T> __device__ __forceinline__ T fromF(float v);
template <> __device__ __forceinline__ float fromF<float>(float v) { return v; }
template <> __device__ __forceinline__ __half fromF<__half>(float v) {
  return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 fromF<__nv_bfloat16>(
    float v) {
  return __float2bfloat16_rn(v);
}

// One CTA per row; strided loops over the row; warp shuffles then shared
// memory for the sum of squares.
template <typename T, int N>
__device__ __forceinline__ void rmsnorm(long long M, const T *x,
                                        long long xs, const T *w, float eps,
                                        T *y, long long ys, float *rstd) {
  long long row = blockIdx.x;
  if (row >= M)
    return;
  const T *xr = x + row * xs;
  T *yr = y + row * ys;
  float acc = 0.f;
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    float v = toF(xr[i]);
    acc += v * v;
  }
  __shared__ float partial[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int o = 16; o > 0; o >>= 1)
    acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0)
    partial[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    int nwarps = (blockDim.x + 31) >> 5;
    acc = lane < nwarps ? partial[lane] : 0.f;
    for (int o = 16; o > 0; o >>= 1)
      acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0)
      partial[0] = acc;
  }
  __syncthreads();
  float r = rsqrtf(partial[0] / N + eps);
  for (int i = threadIdx.x; i < N; i += blockDim.x)
    yr[i] = fromF<T>(toF(xr[i]) * r * toF(w[i]));
  if (threadIdx.x == 0)
    rstd[row] = r;
}
"""

ENTRY = """
extern "C" __global__ void __launch_bounds__({threads}) {symbol}(
    long long M, const {ctype} *x, long long xs, const {ctype} *w, float eps,
    {ctype} *y, long long ys, float *rstd) {{
  rmsnorm<{ctype}, {n}>(M, x, xs, w, eps, y, ys, rstd);
}}
"""


def variants():
    for t, (_, size) in TYPES.items():
        for n in NS:
            # The widest vector (16 bytes) and the element size itself.
            for a in sorted({16, size}):
                yield t, n, a


def metadata(t, n, a, symbol, cubin, threads):
    cluster = [2, 1, 1] if (t, n) == ("f32", 4096) else [1, 1, 1]
    dynamic = 64 * 1024 if (t, n) == ("f16", 8192) else 0
    return {
        "schema": 1, "kernel": "rmsnorm_fwd", "symbol": symbol,
        "cubin": cubin, "arch": "sm_90", "bindings": {"N": n, "T": t},
        "params": [
            {"name": "M", "kind": "rows", "type": "i64"},
            {"name": "x", "kind": "matrix", "role": "input", "dtype": t},
            {"name": "x.row_stride", "kind": "row_stride", "of": "x",
             "type": "i64"},
            {"name": "w", "kind": "row", "role": "input", "dtype": t},
            {"name": "eps", "kind": "scalar", "role": "input", "type": "f32"},
            {"name": "y", "kind": "matrix", "role": "output", "dtype": t},
            {"name": "y.row_stride", "kind": "row_stride", "of": "y",
             "type": "i64"},
            {"name": "rstd", "kind": "per_row", "role": "output",
             "dtype": "f32"},
        ],
        "N": n, "alignment": a, "grid": {"kind": "rows", "rows_per_cta": 1},
        "block": [threads, 1, 1], "cluster": cluster,
        "shared_bytes": {"static": 128, "dynamic": dynamic},
        "config": {"reference": True}, "hash": "reference",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--nvcc", default=os.environ.get("NVCC", "nvcc"))
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    src = [PRELUDE]
    entries = []
    cubin = "reference_rmsnorm.cubin"
    for t, n, a in variants():
        symbol = f"rmsnorm_fwd_{t}_N{n}_a{a}"
        threads = 32 if n <= 32 else (128 if n <= 1024 else 256)
        src.append(ENTRY.format(threads=threads, symbol=symbol,
                                ctype=TYPES[t][0], n=n))
        name = f"rmsnorm_fwd__T-{t}__N-{n}__a{a}.json"
        with open(os.path.join(args.out, name), "w") as f:
            json.dump(metadata(t, n, a, symbol, cubin, threads), f, indent=1)
        entries.append({"kernel": "rmsnorm_fwd", "bindings": {"N": n, "T": t},
                        "alignment": a, "metadata": name})
    cu = os.path.join(args.out, "reference_rmsnorm.cu")
    with open(cu, "w") as f:
        f.write("".join(src))
    cmd = [args.nvcc, "-cubin", f"-arch={args.arch}", "-O3", "-o",
           os.path.join(args.out, cubin), cu]
    print(" ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    with open(os.path.join(args.out, "index.json"), "w") as f:
        json.dump({"schema": 1, "arch": args.arch, "kernels": entries}, f,
                  indent=1)
    print(f"wrote {len(entries)} variants to {args.out}")


if __name__ == "__main__":
    sys.exit(main())

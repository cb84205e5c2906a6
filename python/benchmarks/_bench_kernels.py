"""Triton kernels that bench.py uses to measure the read-only ceiling.

Imported only on the GPU machine, and only when Triton is installed; the
benchmark falls back to torch.sum alone without it.
"""

import triton
import triton.language as tl


@triton.jit
def _partial_sums(x_ptr, out_ptr, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    # Each program reads ITERS consecutive blocks of BLOCK floats and writes
    # one partial sum: the bytes moved are the input, once, and a few KiB.
    pid = tl.program_id(0).to(tl.int64)
    base = pid * (BLOCK * ITERS)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(ITERS):
        offs = base + i * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


BLOCK = 4096
ITERS = 8


def partial_sums_grid(n):
    return triton.cdiv(n, BLOCK * ITERS)


def partial_sums(x, out):
    """Writes into out[i] the sum of the i-th chunk of BLOCK * ITERS
    elements of the flat f32 tensor x; out needs partial_sums_grid(n)
    elements."""
    n = x.numel()
    _partial_sums[(partial_sums_grid(n),)](x, out, n, BLOCK=BLOCK,
                                          ITERS=ITERS, num_warps=8)
    return out

"""Shared pieces of the GPU tests: skips, references and error measures."""

import os
import zlib

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

if not torch.cuda.is_available():
    pytest.skip("no CUDA device available", allow_module_level=True)
if not os.environ.get("QUACK_MLIR_BUNDLE"):
    pytest.skip("QUACK_MLIR_BUNDLE is not set (a directory written by "
                "quackc --bundle, or a directory of such directories)",
                allow_module_level=True)

DTYPES = [torch.bfloat16, torch.float16, torch.float32]
DTYPE_IDS = {torch.bfloat16: "bf16", torch.float16: "f16",
             torch.float32: "f32"}


def seed_for(name):
    """A seed for the test named `name`, the same in every process (str
    hashes are salted per process, which drew new data on every run)."""
    return zlib.crc32(name.encode()) & 0xFFFF


def dtype_id(d):
    return DTYPE_IDS[d]


def finite(out):
    out = out.double()
    assert not torch.isnan(out).any(), "output has NaN (unwritten element?)"
    assert torch.isfinite(out).all(), "output has inf"
    return out


def rel_err(out, ref):
    """||out - ref|| / ||ref|| over the whole tensor."""
    out = finite(out)
    ref = ref
    denom = torch.linalg.vector_norm(ref).item()
    return torch.linalg.vector_norm(out - ref).item() / max(denom, 1e-30)


def masked_rel_err(out, ref):
    """||out - ref|| / ||ref|| over the elements where the reference is
    finite; out may be NaN only where the reference is."""
    out, ref = out.double(), ref.double()
    assert not torch.isnan(out[~torch.isnan(ref)]).any(), "unexpected NaN"
    mask = torch.isfinite(ref)
    d = torch.linalg.vector_norm((out - ref)[mask])
    r = torch.linalg.vector_norm(ref[mask]).clamp_min(1e-30)
    return (d / r).item()


def max_row_rel(out, ref):
    """The worst row's relative error, out never NaN (one wrong CTA of a
    cluster hides in a whole-tensor norm)."""
    out, ref = out.double(), ref.double()
    assert not torch.isnan(out).any(), "unwritten element (NaN)"
    num = torch.linalg.vector_norm(out - ref, dim=-1)
    den = torch.linalg.vector_norm(ref, dim=-1).clamp_min(1e-30)
    return (num / den).max().item()


def max_row_err(out, ref):
    """The largest per-row ||out - ref|| / ||ref|| (a single wrong row
    hides in a whole-tensor norm)."""
    n = ref.shape[-1]
    out = finite(out).reshape(-1, n)
    ref = ref.reshape(-1, n)
    if ref.shape[0] == 0:
        return 0.0
    num = torch.linalg.vector_norm(out - ref, dim=-1)
    den = torch.linalg.vector_norm(ref, dim=-1).clamp_min(1e-30)
    return (num / den).max().item()


def poison(*shapes_dtypes, device="cuda"):
    """Allocates NaN-filled blocks of these (shape, dtype) and frees them, so
    that the next allocations of the same sizes get poisoned memory back
    from the caching allocator and unwritten elements show up as NaN."""
    blocks = [torch.full(s, float("nan"), dtype=d, device=device)
              for s, d in shapes_dtypes]
    del blocks

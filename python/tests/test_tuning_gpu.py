"""On the GPU: a tuning target's bundle (scripts/build-catalogue.sh writes
e.g. cross_entropy-h100/) serves the devices it names and no other. The
op runs through its variant on such a device (and through the
architecture's elsewhere), and its result matches the reference.

Needs the bundle root of scripts/build-catalogue.sh in QUACK_MLIR_BUNDLE,
as scripts/gpu-check.sh passes it; skipped where that root has no tuning
target's bundle with a cross_entropy_fwd variant.
"""

import importlib

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA device")

import quack_mlir as qm  # noqa: E402
from quack_mlir import _kernels  # noqa: E402
from quack_mlir.bundle import BundleError  # noqa: E402


def target_variant():
    """(bundle, N) of a bf16 cross_entropy_fwd variant with ignore_index
    in a tuning target's bundle of the bundle path in use."""
    try:
        bundles = _kernels.get_bundle().bundles
    except BundleError as e:
        pytest.skip(f"no bundle path: {e}")
    for b in bundles:
        if not b.tuning:
            continue
        for v in b.variants:
            if (v.kernel == "cross_entropy_fwd" and v.alignment == 16 and
                    v.bindings.get("T") == "bf16" and
                    v.bindings.get("IGNORE") == "true"):
                return b, v, int(v.bindings["N"])
    pytest.skip("the bundle path has no tuning target's cross_entropy_fwd")


def test_candidates_follow_the_device_name():
    b, v, n = target_variant()
    key = {"T": "bf16", "N": n, "IGNORE": "true"}
    source = _kernels.get_source()
    name = torch.cuda.get_device_name()
    first = source.candidates("cross_entropy_fwd", key, device=name)[0]
    assert (first.directory == b.path) == (v.tuning_device in name)
    # Named for a device it serves, and for none.
    assert source.candidates("cross_entropy_fwd", key,
                             device=f"X {v.tuning_device} Y")[0].directory \
        == b.path
    assert all(c.directory != b.path for c in
               source.candidates("cross_entropy_fwd", key, device=None))


def test_the_op_runs_the_variant_its_device_gets():
    b, v, n = target_variant()
    ce = importlib.import_module("quack_mlir.cross_entropy")
    # The same bundles, every cache emptied (the C++ launch path's too,
    # which would otherwise launch a remembered variant without asking).
    from quack_mlir import _kernels
    _kernels.set_bundle(_kernels._bundle_spec)
    torch.manual_seed(0)
    logits = torch.randn(257, n, device="cuda").to(torch.bfloat16)
    target = torch.randint(0, n, (257,), device="cuda")
    target[3] = -100
    loss = qm.cross_entropy(logits, target, reduction="none")
    ref = torch.nn.functional.cross_entropy(logits.double(), target,
                                            reduction="none")
    assert torch.allclose(loss.double(), ref, rtol=1e-3, atol=1e-3)
    fam = ce._fwd._families[("bf16", n)]
    used = [p.kernel.path for p in fam.plans.values()]
    assert used
    serves = v.tuning_device in torch.cuda.get_device_name()
    assert all(path.startswith(b.path) == serves for path in used), used

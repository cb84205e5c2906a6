"""GPU tests of quack_mlir.argmax (kernels/argmax.qk) against a reference
computed on the host: the first index of the largest element, NaN counting
as larger than every number.

Needs torch with CUDA and a bundle root holding argmax for T in {bf16, f16,
f32} and the N below (scripts/build-catalogue.sh); without either the
module is skipped with the reason shown (pytest -rs).
"""

import pytest

from gpu_common import DTYPES, dtype_id, torch, seed_for

import quack_mlir  # noqa: E402

# M x N stays under this many elements per test.
MAX_ELEMENTS = 1 << 26


def reference(x):
    """First index of the maximum per row; the first NaN where there is one
    (computed in float64 on the host)."""
    xd = x.detach().double().cpu()
    n = xd.shape[-1]
    cols = torch.arange(n, dtype=torch.int64).expand_as(xd)
    big = torch.iinfo(torch.int64).max
    best = xd.max(dim=-1, keepdim=True).values  # NaN where a NaN is present
    is_best = torch.where(torch.isnan(best), torch.isnan(xd), xd == best)
    return torch.where(is_best, cols, big).min(dim=-1).values


def check(x, dim=-1):
    index = quack_mlir.argmax(x, dim=dim)
    torch.cuda.synchronize()
    assert index.dtype == torch.int64 and index.shape == x.shape[:-1]
    ref = reference(x).view(x.shape[:-1])
    bad = (index.cpu() != ref).nonzero()
    assert bad.numel() == 0, (
        f"{bad.shape[0]} rows differ, first at {bad[0].tolist()}: "
        f"{index.cpu()[tuple(bad[0])].item()} != {ref[tuple(bad[0])].item()}")
    return index


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(seed_for(request.node.name))


@pytest.mark.parametrize("m", [1, 3, 1024])
@pytest.mark.parametrize("n", [1, 7, 1000, 4096, 16384, 16390, 65536, 262144])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_argmax(dtype, n, m):
    m = max(1, min(m, MAX_ELEMENTS // n))
    check(torch.randn(m, n, device="cuda").to(dtype))


@pytest.mark.parametrize("n", [1000, 4096, 65536])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_ties_take_the_first_index(dtype, n):
    # Few distinct values: many ties, across threads, warps and CTAs.
    x = torch.randint(-3, 4, (64, n), device="cuda").to(dtype)
    idx = check(x)
    # Rows whose maximum sits at a column chosen per row, twice.
    x = torch.full((64, n), -1.0, device="cuda", dtype=dtype)
    a = torch.randint(0, n, (64,), device="cuda")
    b = torch.randint(0, n, (64,), device="cuda")
    rows = torch.arange(64, device="cuda")
    x[rows, a] = 2.0
    x[rows, b] = 2.0
    idx = check(x)
    assert torch.equal(idx, torch.minimum(a, b))


@pytest.mark.parametrize("n", [7, 4096, 65536])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_nan_and_infinities(dtype, n):
    x = torch.randn(6, n, device="cuda").to(dtype)
    x[0, n // 2] = float("nan")          # one NaN wins
    x[1, n - 1] = float("nan")           # the last column
    x[1, n // 3] = float("nan")          # ... but an earlier NaN wins
    x[2] = float("-inf")                 # all -inf: column 0
    x[3, n // 2] = float("inf")          # +inf wins
    x[4] = float("nan")                  # all NaN: column 0
    check(x)


@pytest.mark.parametrize("pad", [64, 3])
@pytest.mark.parametrize("n", [7, 1000, 4096, 65536])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_strided_rows(dtype, n, pad):
    big = torch.randn(33, n + pad, device="cuda").to(dtype)
    check(big[:, :n])


def test_batch_invariance():
    # A row's result does not depend on how many rows share the launch.
    x = torch.randint(-2, 3, (4099, 4096), device="cuda").to(torch.bfloat16)
    whole = quack_mlir.argmax(x)
    for rows in (1, 3, 1024):
        assert torch.equal(quack_mlir.argmax(x[:rows]), whole[:rows])


def test_leading_dims_zero_rows_and_errors():
    x = torch.randn(2, 3, 1000, device="cuda")
    check(x)
    assert quack_mlir.argmax(x[:0]).shape == (0, 3)
    with pytest.raises(ValueError, match="only the last dimension"):
        quack_mlir.argmax(x, dim=0)
    with pytest.raises(TypeError, match="dtype"):
        quack_mlir.argmax(x.double())

"""Softmax forward over the last dimension."""

from . import _fast, _ops
from ._launch import Launcher

__all__ = ["softmax"]

_OP = "softmax"
# softmax_fwd(M, x, x.row_stride, y, y.row_stride)
_kernel = Launcher("softmax_fwd", ("T", "N"))
_fast.register(_fast.SOFTMAX, _kernel, lambda t, n: (t, n))


def softmax_forward(x):
    """Returns y; the eager path, validating everything."""
    ops = _ops
    if ops.torch is None:
        ops.init_torch()
    m, n, stride, dt, contiguous = ops.rows(_OP, x)
    dev = ops.device(_OP, x)
    y = ops.empty_rows_like(x, contiguous)
    if m > 0:
        ops.launch(_kernel, (dt[0], n), dev, m, (
            x.data_ptr(), stride, y.data_ptr(), n if m > 1 else 0))
    return y


def _check_dim(x, dim):
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{_OP}: dim must be an int, got "
                        f"{type(dim).__name__}")
    if isinstance(x, _ops.Tensor):
        nd = x.dim()
        if dim != -1 and dim != nd - 1:
            raise ValueError(
                f"{_OP}: only the last dimension is supported (dim=-1 or "
                f"dim={max(nd - 1, 0)} for this {nd}-d x), got dim={dim}; "
                "move that dimension last first, e.g. "
                f"softmax(x.movedim({dim}, -1)).movedim(-1, {dim})")


_op = None


def _get_op():
    """The torch.library op that torch.compile sees."""
    global _op
    if _op is not None:
        return _op
    torch = _ops.torch

    @torch.library.custom_op("quack_mlir::softmax_fwd", mutates_args=())
    def softmax_fwd(x: torch.Tensor) -> torch.Tensor:
        return softmax_forward(x)

    @softmax_fwd.register_fake
    def _(x):
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    _op = softmax_fwd
    return _op


def softmax(x, dim=-1):
    """Softmax over the last dimension of `x`, as torch.softmax(x, dim).

    y = exp(x - max(x)) / sum(exp(x - max(x))) along the last dimension,
    computed in f32 and returned in x's dtype and shape (contiguous).

    x: [..., N] on a CUDA device, bf16/f16/f32, last dimension unit-stride
    (a 2-D view with a wider row stride is used as is). `dim` must name the
    last dimension (-1 or x.dim() - 1). Runs on the current CUDA stream.
    """
    if _ops.torch is None:
        _ops.init_torch()
    fast = _fast.softmax
    if fast is not None and type(dim) is int and dim == -1 and (
            not _ops.torch.compiler.is_compiling()):
        y = fast(x)
        if y is not None:
            return y
    _check_dim(x, dim)
    if _ops.torch.compiler.is_compiling():
        return _get_op()(x)
    return softmax_forward(x)


try:
    _ops.init_torch()
except ImportError:
    pass
else:
    _get_op()

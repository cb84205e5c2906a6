"""Row argmax over the last dimension."""

from . import _ops
from ._launch import Launcher

__all__ = ["argmax"]

_OP = "argmax"
# argmax(M, x, x.row_stride, index)
_kernel = Launcher("argmax", ("T", "N"))


def argmax_forward(x):
    """Returns the int64 indices [...]; the eager path, validating all."""
    ops = _ops
    if ops.torch is None:
        ops.init_torch()
    m, n, stride, dt, _ = ops.rows(_OP, x)
    dev = ops.device(_OP, x)
    index = x.new_empty(m, dtype=_int64())
    if m > 0:
        ops.launch(_kernel, (dt[0], n), dev, m, (
            x.data_ptr(), stride, index.data_ptr()))
    return index if x.dim() == 2 else index.view(x.shape[:-1])


_int64 = _ops.once(lambda: _ops.torch.int64)


def _build_op():
    """The torch.library op that torch.compile sees."""
    torch = _ops.torch

    @torch.library.custom_op("quack_mlir::argmax", mutates_args=())
    def argmax_op(x: torch.Tensor) -> torch.Tensor:
        return argmax_forward(x)

    @argmax_op.register_fake
    def _(x):
        return x.new_empty(x.shape[:-1], dtype=torch.int64)

    return argmax_op


_get_op = _ops.once(_build_op)


def argmax(x, dim=-1):
    """The index of the largest element along the last dimension of `x`, as
    torch.argmax(x, dim): int64, of shape x.shape[:-1].

    The first index wins among equal values, and a NaN counts as larger
    than every number (the first NaN's index), as torch.argmax. x: [..., N]
    on a CUDA device, bf16/f16/f32, last dimension unit-stride; `dim` must
    name the last dimension. Runs on the current CUDA stream.
    """
    if _ops.torch is None:
        _ops.init_torch()
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{_OP}: dim must be an int, got "
                        f"{type(dim).__name__}")
    if isinstance(x, _ops.Tensor) and dim not in (-1, x.dim() - 1):
        raise ValueError(f"{_OP}: only the last dimension is supported "
                         f"(dim=-1), got dim={dim}")
    if _ops.torch.compiler.is_compiling():
        return _get_op()(x)
    return argmax_forward(x)


_ops.register_at_import(_get_op)

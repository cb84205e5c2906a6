"""RMSNorm forward over the last dimension."""

from . import _ops
from ._launch import Launcher, float_bits

__all__ = ["rmsnorm"]

_OP = "rmsnorm"
# rmsnorm_fwd(M, x, x.row_stride, w, eps, y, y.row_stride, rstd)
# The plain variant: weight in x's dtype, no residual, bias or offset.
_kernel = Launcher("rmsnorm_fwd", ("T", "TW", "N"),
                   fixed={"RESIDUAL": "false", "BIAS": "false",
                          "OFFSET": "false"})


def check_eps(op, eps):
    if not isinstance(eps, (int, float)) or isinstance(eps, bool):
        raise TypeError(f"{op}: eps must be a float, got "
                        f"{type(eps).__name__}")


def rmsnorm_forward(x, weight, eps):
    """Returns (y, rstd); the eager path, validating everything."""
    ops = _ops
    if ops.torch is None:
        ops.init_torch()
    m, n, stride, dt, contiguous = ops.rows(_OP, x)
    ops.vector(_OP, "weight", weight, x, n)
    dev = ops.device(_OP, x, ("weight", weight))
    y = ops.empty_rows_like(x, contiguous)
    rstd = ops.empty_per_row(x, m)
    if m > 0:
        ops.launch(_kernel, (dt[0], dt[0], n), dev, m, (
            x.data_ptr(), stride, weight.data_ptr(), float_bits(eps),
            y.data_ptr(), n if m > 1 else 0, rstd.data_ptr()))
    return y, rstd


_op = None


def _get_op():
    """The torch.library op that torch.compile sees."""
    global _op
    if _op is not None:
        return _op
    torch = _ops.torch

    @torch.library.custom_op("quack_mlir::rmsnorm_fwd", mutates_args=())
    def rmsnorm_fwd(x: torch.Tensor, weight: torch.Tensor,
                    eps: float) -> tuple[torch.Tensor, torch.Tensor]:
        return rmsnorm_forward(x, weight, eps)

    @rmsnorm_fwd.register_fake
    def _(x, weight, eps):
        return (torch.empty_like(x, memory_format=torch.contiguous_format),
                x.new_empty((x.shape[:-1].numel(),), dtype=torch.float32))

    _op = rmsnorm_fwd
    return _op


def rmsnorm(x, weight, eps=1e-6, return_rstd=False):
    """RMSNorm over the last dimension of `x`.

    y = x * rsqrt(mean(x * x, dim=-1) + eps) * weight, accumulated in f32 and
    returned in x's dtype and shape (contiguous); with `return_rstd`, also the
    per-row rsqrt(mean(x * x) + eps) in f32, of shape [M] where M is the
    product of x's leading dimensions.

    x: [..., N] on a CUDA device, bf16/f16/f32, last dimension unit-stride
    (a 2-D view with a wider row stride is used as is). weight: [N], same
    dtype and device, contiguous. Runs on the current CUDA stream.
    """
    if _ops.torch is None:
        _ops.init_torch()
    check_eps(_OP, eps)
    if _ops.torch.compiler.is_compiling():
        y, rstd = _get_op()(x, weight, float(eps))
    else:
        y, rstd = rmsnorm_forward(x, weight, eps)
    return (y, rstd) if return_rstd else y


# Register the op at import (it cannot be registered while torch.compile
# traces); without torch the package still imports, for CPU-only use.
try:
    _ops.init_torch()
except ImportError:
    pass
else:
    _get_op()

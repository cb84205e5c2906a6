"""Cross-entropy over the last dimension, with autograd.

The forward kernel (cross_entropy_fwd) gives each row's loss and its
log-sum-exp; the backward kernel (cross_entropy_bwd) turns the saved
log-sum-exp and the incoming gradient into dlogits in one pass. Both ignore
rows whose target is `ignore_index`.
"""

from . import _fast, _ops
from ._launch import Launcher, float_bits  # noqa: F401

__all__ = ["cross_entropy"]

_OP = "cross_entropy"
# cross_entropy_fwd(M, x, x.row_stride, target, ignore_index, loss, lse)
_fwd = Launcher("cross_entropy_fwd", ("T", "N"), fixed={"IGNORE": "true"})
# cross_entropy_bwd(M, x, x.row_stride, target, lse, dloss, ignore_index,
#                   dx, dx.row_stride)
_bwd = Launcher("cross_entropy_bwd", ("T", "N"), fixed={"IGNORE": "true"})
_fast.register(_fast.CROSS_ENTROPY, _fwd, lambda t, n: (t, n))
_fast.register(_fast.CROSS_ENTROPY_BWD, _bwd, lambda t, n: (t, n))


_REDUCTIONS = ("mean", "sum", "none")


def _check(logits, target, reduction, ignore_index):
    torch = _ops.torch
    if not isinstance(logits, _ops.Tensor) or logits.dim() != 2:
        raise ValueError(f"{_OP}: logits must be a 2-d tensor [M, N], got "
                         f"{getattr(logits, 'shape', type(logits).__name__)}")
    if not isinstance(target, _ops.Tensor) or target.dim() != 1:
        raise ValueError(f"{_OP}: target must be a 1-d tensor [M]")
    if target.dtype != torch.int64:
        raise TypeError(f"{_OP}: target must be torch.int64, got "
                        f"{target.dtype}")
    if target.shape[0] != logits.shape[0]:
        raise ValueError(f"{_OP}: target has {target.shape[0]} rows but "
                         f"logits has {logits.shape[0]}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{_OP}: reduction must be 'mean', 'sum' or "
                         f"'none', got {reduction!r}")
    if not isinstance(ignore_index, int) or isinstance(ignore_index, bool):
        raise TypeError(f"{_OP}: ignore_index must be an int")


def _forward(logits, target, ignore_index, keep_lse=True):
    """Returns (loss, lse); without `keep_lse` the lse goes to a scratch
    buffer and None is returned in its place."""
    m, n, stride, dt, _ = _ops.rows(_OP, logits, "logits")
    dev = _ops.device(_OP, logits, ("target", target), name="logits")
    target = target.contiguous()
    loss = _ops.empty_per_row(logits, m)
    lse = _ops.stats_per_row(logits, m, dev, keep_lse)
    if m > 0:
        _ops.launch(_fwd, (dt[0], n), dev, m, (
            logits.data_ptr(), stride, target.data_ptr(), ignore_index,
            loss.data_ptr(), lse.data_ptr()))
    return loss, (lse if keep_lse else None)


def _backward(logits, target, lse, dloss, ignore_index):
    m, n, stride, dt, _ = _ops.rows(_OP, logits, "logits")
    dev = _ops.device(_OP, logits, name="logits")
    dx = _ops.torch.empty((m, n), dtype=logits.dtype, device=logits.device)
    dloss = dloss.float().contiguous()
    if m > 0:
        _ops.launch(_bwd, (dt[0], n), dev, m, (
            logits.data_ptr(), stride, target.data_ptr(), lse.data_ptr(),
            dloss.data_ptr(), ignore_index, dx.data_ptr(), n if m > 1 else 0))
    return dx


_Function = None


def _function():
    global _Function
    if _Function is not None:
        return _Function
    torch = _ops.torch

    class CrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits, target, ignore_index):
            # Grad mode is off in here: the C++ path serves (or None).
            fast = _fast.cross_entropy
            out = (fast(logits, target, ignore_index, True)
                   if fast is not None else None)
            loss, lse = out if out is not None else _forward(
                logits, target, ignore_index)
            ctx.save_for_backward(logits, target, lse)
            ctx.ignore_index = ignore_index
            return loss

        @staticmethod
        @_ops.torch.autograd.function.once_differentiable
        def backward(ctx, dloss):
            logits, target, lse = ctx.saved_tensors
            # A reduction's gradient arrives expanded (stride 0), in the
            # loss's dtype: the kernel reads f32 per row.
            dloss = dloss.float().contiguous()
            fast = _fast.cross_entropy_backward
            dx = (fast(logits, target, lse, dloss, ctx.ignore_index)
                  if fast is not None else None)
            if dx is None:
                dx = _backward(logits, target.contiguous(), lse, dloss,
                               ctx.ignore_index)
            return dx, None, None

    _Function = CrossEntropy
    return _Function


_op = None


def _get_op():
    """The torch.library ops that torch.compile sees: the forward (loss
    and lse per row) with its autograd, and the backward."""
    global _op
    if _op is not None:
        return _op
    torch = _ops.torch

    @torch.library.custom_op("quack_mlir::cross_entropy_fwd",
                             mutates_args=())
    def cross_entropy_fwd(logits: torch.Tensor, target: torch.Tensor,
                          ignore_index: int
                          ) -> tuple[torch.Tensor, torch.Tensor]:
        return _forward(logits, target, ignore_index)

    @cross_entropy_fwd.register_fake
    def _(logits, target, ignore_index):
        m = logits.shape[0]
        return (logits.new_empty((m,), dtype=torch.float32),
                logits.new_empty((m,), dtype=torch.float32))

    @torch.library.custom_op("quack_mlir::cross_entropy_bwd",
                             mutates_args=())
    def cross_entropy_bwd(logits: torch.Tensor, target: torch.Tensor,
                          lse: torch.Tensor, dloss: torch.Tensor,
                          ignore_index: int) -> torch.Tensor:
        return _backward(logits, target.contiguous(), lse, dloss,
                         ignore_index)

    @cross_entropy_bwd.register_fake
    def _(logits, target, lse, dloss, ignore_index):
        return torch.empty_like(logits, memory_format=torch.contiguous_format)

    def setup_context(ctx, inputs, output):
        logits, target, ignore_index = inputs
        ctx.save_for_backward(logits, target, output[1])
        ctx.ignore_index = ignore_index

    def backward(ctx, dloss, _dlse):
        logits, target, lse = ctx.saved_tensors
        return (cross_entropy_bwd(logits, target, lse, dloss,
                                  ctx.ignore_index), None, None)

    cross_entropy_fwd.register_autograd(backward, setup_context=setup_context)
    _op = cross_entropy_fwd
    return _op


def cross_entropy(logits, target, reduction="mean", ignore_index=-100):
    """torch.nn.functional.cross_entropy(logits, target, reduction=...,
    ignore_index=...) for 2-d logits [M, N] (bf16/f16/f32, last dimension
    unit-stride) and int64 targets [M], with autograd (under torch.compile
    through the torch.library ops quack_mlir::cross_entropy_fwd/_bwd).

    Rows whose target is ignore_index have loss 0 and gradient 0; 'mean'
    divides by the number of other rows (NaN when every row is ignored, as
    torch). A target outside [0, N) that is not ignored gives a NaN loss for
    its row and never reads out of bounds.
    """
    if _ops.torch is None:
        _ops.init_torch()
    torch = _ops.torch
    fast = _fast.cross_entropy
    loss = None
    if fast is not None and not torch.compiler.is_compiling() and (
            reduction in _REDUCTIONS):
        # Without autograd; None where the checked path below serves.
        loss = fast(logits, target, ignore_index, False)
    if loss is None:
        _check(logits, target, reduction, ignore_index)
        if torch.compiler.is_compiling():
            loss = _get_op()(logits, target, ignore_index)[0]
        elif not logits.requires_grad or not torch.is_grad_enabled():
            # Nothing to differentiate: the kernel alone, without the cost
            # of an autograd.Function (its context and saved tensors).
            loss = _forward(logits, target, ignore_index, keep_lse=False)[0]
        else:
            loss = _function().apply(logits, target, ignore_index)
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "sum":
        return total
    return total / (target != ignore_index).sum()


_ops.register_at_import(_get_op)

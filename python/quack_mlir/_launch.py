"""The one launch path every op uses: find the variant of a catalogue kernel
for (bindings, alignment of every pointer and row stride) and launch it with
M and the arguments in metadata parameter order.

    _softmax = Launcher("softmax_fwd", ("T", "N"))
    _softmax.launch(("bf16", 4096), m, (x_ptr, x_stride, y_ptr, y_stride),
                    stream)

`args` holds one int per parameter after M, as docs/abi.md orders them:
device addresses, row strides in elements, integer scalars, and
floating-point scalars as their 64-bit double pattern (`float_bits`).

Per call this costs a dict lookup for the bindings, one generated
expression that ORs every pointer and every row stride times its element
size (the alignment, read off the metadata of the kernel itself), a second
dict lookup for the variant, a slice assignment into a prebuilt ctypes
array and one ctypes call with ready ctypes objects. Kernels with sums
over rows also have their workspace size remembered per (variant, device,
M) (`workspace_bytes`), so a backward pass asks the runtime only once.
Nothing here needs torch.
"""

import ctypes
import threading

from . import _kernels
from ._runtime import KernelError, float_arg

__all__ = ["Launcher", "float_bits"]

_ERR_LEN = 2048
_ELEM_SIZE = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8}
_get_ident = threading.get_ident

# Alignment is looked at up to this many bytes (the bits below it).
_ALIGN_CAP = 256
_ALIGN_MASK = _ALIGN_CAP - 1

_float_bits = {}
# Threads other than a plan's owner whose launch arguments it keeps.
_OTHER_THREADS_MAX = 64
# Workspace sizes remembered per variant (one per (device, M) seen).
_WS_CACHE_MAX = 256


def float_bits(value):
    """The 64-bit pattern of `value` as a double, cached for the few values
    (eps) that ops see again and again."""
    bits = _float_bits.get(value)
    if bits is None:
        bits = float_arg(value)
        if len(_float_bits) < 256:
            _float_bits[value] = bits
    return bits


class _Plan:
    """One loaded variant with its prebuilt launch arguments.

    The argument array, M, the stream and the error buffer are ctypes
    objects reused from call to call by the thread that built the plan;
    every other thread has a set of its own (`others`, by thread id: an
    array is only safe to reuse while no other thread can fill it between
    our fill and our call). The autograd engine runs backward passes on a
    thread of its own per device, so a backward kernel mostly serves two.
    """

    __slots__ = ("kernel", "fn", "handle", "Arr", "arr", "nargs", "m",
                 "stream", "err", "err_len", "owner", "others", "ws")

    def __init__(self, kernel, fn):
        self.kernel = kernel
        self.fn = fn
        self.handle = kernel._handle
        self.nargs = kernel.num_args
        self.Arr = ctypes.c_int64 * max(self.nargs, 1)
        self.arr = self.Arr()
        self.m = ctypes.c_int64(0)
        self.stream = ctypes.c_void_p(0)
        self.err = ctypes.create_string_buffer(_ERR_LEN)
        self.err_len = ctypes.c_size_t(_ERR_LEN)
        self.owner = _get_ident()
        # Thread id -> (array, M, stream, error buffer) of another thread.
        self.others = {}
        # (device index, M) -> workspace bytes (kernels with sums over rows).
        self.ws = {}


class _Family:
    """The variants of one kernel for one set of bindings."""

    __slots__ = ("launcher", "bindings", "candidates", "bits", "plans",
                 "layout", "device")

    def __init__(self, launcher, bindings):
        self.launcher = launcher
        self.bindings = bindings
        # The device whose tuning target's variants serve (the current one).
        self.device = _kernels.current_device_name()
        # Largest alignment first.
        self.candidates = list(_kernels.get_source().candidates(
            launcher.kernel, bindings, device=self.device))
        first = _kernels.load_variant(self.candidates[0])
        self.layout = _alignment_terms(first)
        self.bits = _bits_function(self.layout)
        # (OR of pointers and stride bytes) & _ALIGN_MASK -> _Plan.
        self.plans = {}

    def plan(self, bits):
        """The plan serving arguments whose low address bits are `bits`."""
        align = (bits & -bits) if bits else _ALIGN_CAP
        for v in self.candidates:
            if align % v.alignment == 0:
                break
        else:
            # A narrower variant from the JIT, or KernelNotFoundError naming
            # what the variants need.
            v = _kernels.get_source().find(self.launcher.kernel,
                                           self.bindings, align,
                                           device=self.device)
            # A new list: other threads may be reading this one.
            self.candidates = sorted([*self.candidates, v],
                                     key=lambda c: -c.alignment)
        kernel = _kernels.load_variant(v)
        if _alignment_terms(kernel) != self.layout:
            raise KernelError(
                2, f"{kernel.path}: its parameters differ from those of the "
                "other variants with the same bindings")
        plan = _Plan(kernel, self.launcher._fn)
        self.plans[bits] = plan
        return plan


def _alignment_terms(kernel):
    """[(argument index after M, scale)]: every pointer (scale 1) and every
    row stride (scale: its matrix's element size in bytes)."""
    terms = []
    params = kernel.params
    for i, p in enumerate(params[1:]):
        if p.kind in ("matrix", "row", "per_row"):
            terms.append((i, 1))
        elif p.kind == "row_stride":
            terms.append((i, _ELEM_SIZE[params[p.of].type]))
    return tuple(terms)


def _bits_function(terms):
    """A function of the argument tuple: the OR of every term, masked to the
    bits that decide the alignment. Generated from integers only; terms of
    one scale share a multiplication."""
    by_scale = {}
    for i, s in terms:
        by_scale.setdefault(s, []).append(f"a[{i}]")
    if not by_scale:
        return lambda a: 0
    parts = []
    for s, items in sorted(by_scale.items()):
        group = " | ".join(items)
        parts.append(group if s == 1 else f"({group}) * {s}")
    return eval(f"lambda a: ({' | '.join(parts)}) & {_ALIGN_MASK}")  # noqa


class Launcher:
    """Launches the variants of one catalogue kernel, chosen by the values
    of `binding_names` (in that order) and by alignment."""

    def __init__(self, kernel, binding_names=("T", "N"), fixed=None):
        self.kernel = kernel
        self.binding_names = tuple(binding_names)
        # Bindings every variant of this launcher has, e.g. flags that are
        # off ({"BIAS": "false"}).
        self.fixed = dict(fixed or {})
        # Binding values -> _Family; emptied by set_bundle.
        self._families = {}
        _kernels.fast_caches.append(self._families)
        self._fn = None

    def family(self, key):
        fam = self._families.get(key)
        if fam is None:
            from ._runtime import raw_launch_function
            self._fn = raw_launch_function()
            fam = _Family(self, {**self.fixed,
                                 **dict(zip(self.binding_names, key))})
            fam = self._families.setdefault(key, fam)
        return fam

    def _plan(self, key, args):
        fam = self._families.get(key)
        if fam is None:
            fam = self.family(key)
        bits = fam.bits(args)
        plan = fam.plans.get(bits)
        if plan is None:
            plan = fam.plan(bits)
        return plan

    def select(self, key, args):
        """The loaded Kernel that `launch(key, m, args)` would use."""
        return self._plan(key, args).kernel

    def workspace_bytes(self, key, m, args, device):
        """Kernel.workspace_size(m) of the variant `launch(key, m, args)`
        would use, remembered per (device, M): it depends only on the
        variant, M and the device (how many CTAs stay resident there). Call
        it with `device` (an index) the current CUDA device."""
        plan = self._plan(key, args)
        ws = plan.ws
        wkey = (device, m)
        size = ws.get(wkey)
        if size is None:
            size = plan.kernel.workspace_size(m)
            if len(ws) >= _WS_CACHE_MAX:
                ws.clear()
            ws[wkey] = size
        return size

    def launch(self, key, m, args, stream=0):
        """Launches over `m` rows on `stream` (a CUstream as an int) with
        `args` (a tuple, one value per parameter after M)."""
        fam = self._families.get(key)
        if fam is None:
            fam = self.family(key)
        bits = fam.bits(args)
        plan = fam.plans.get(bits)
        if plan is None:
            plan = fam.plan(bits)
        ident = _get_ident()
        if plan.owner == ident:
            arr = plan.arr
            mo = plan.m
            so = plan.stream
            err = plan.err
        else:
            own = plan.others.get(ident)
            if own is None:
                own = (plan.Arr(), ctypes.c_int64(0), ctypes.c_void_p(0),
                       ctypes.create_string_buffer(_ERR_LEN))
                # Ids of threads that ended are reused by new ones; the
                # count stays bounded however many come and go.
                if len(plan.others) >= _OTHER_THREADS_MAX:
                    plan.others.clear()
                plan.others[ident] = own
            arr, mo, so, err = own
        arr[:] = args
        mo.value = m
        so.value = stream
        status = plan.fn(plan.handle, mo, arr, plan.nargs, so, err,
                         plan.err_len)
        if status:
            raise KernelError(status, err.value.decode(errors="replace"))

"""Where kernels come from: the bundles in use and a cache of loaded kernels.

The bundle path is $QUACK_MLIR_BUNDLE or what `set_bundle` was given: one or
more entries separated by os.pathsep, each a bundle directory (it holds
index.json) or a bundle root (a directory whose subdirectories are bundle
directories, such as one `quackc KERNEL.qk --bundle=ROOT/KERNEL` per .qk
file). See bundle.find_bundle_dirs.

Where the bundles have no variant for what an op needs (or no bundle is
set) and quackc is at hand, the variant is compiled on demand into an
on-disk cache (jit.py).

Bundles of a tuning target (bundle.py) serve the devices it names: their
variants are chosen by the name of the current CUDA device when an op's
kernel is first launched with given bindings ($QUACK_MLIR_DEVICE_NAME, if
set, stands for it; empty, it names none). A process whose GPUs want
different tuning targets gets, per kernel and bindings, the variants of
the first device it launches them on; every variant computes the same
result, they differ in speed only.
"""

import os
import sys
import threading
import warnings

from . import jit as _jit
from .bundle import BundleError, BundleSet, KernelNotFoundError

_lock = threading.Lock()
_bundle_spec = None
_bundle = None
_source = None
# Metadata path -> loaded Kernel.
_loaded = {}
# (kernel, bindings as a tuple, alignment of the actual tensors) -> Kernel.
_cache = {}
# Per-op caches of kernels (launchers register theirs), emptied with _cache.
fast_caches = []


def set_bundle(path):
    """Uses the bundle path `path` (overrides $QUACK_MLIR_BUNDLE): a bundle
    directory, a bundle root, several of them joined with os.pathsep, or a
    list of them.

    `None` goes back to $QUACK_MLIR_BUNDLE. Loaded kernels are forgotten.
    """
    global _bundle_spec, _bundle, _source
    with _lock:
        if path is None:
            _bundle_spec = None
        elif isinstance(path, (str, bytes, os.PathLike)):
            _bundle_spec = os.fspath(path)
        else:
            _bundle_spec = [os.fspath(p) for p in path]
        _bundle = None
        _source = None
        _cache.clear()
        _loaded.clear()
        for cache in fast_caches:
            cache.clear()


def _spec():
    """The bundle path in use: set_bundle's, else $QUACK_MLIR_BUNDLE."""
    return _bundle_spec or os.environ.get("QUACK_MLIR_BUNDLE")


def get_bundle():
    """Returns the BundleSet in use, reading its indexes on first use."""
    global _bundle
    b = _bundle
    if b is not None:
        return b
    with _lock:
        if _bundle is None:
            spec = _spec()
            if not spec:
                raise BundleError(
                    "no kernel bundle: set QUACK_MLIR_BUNDLE to a directory "
                    "written by `quackc --bundle` (or a directory of such "
                    "directories, or several joined with "
                    f"{os.pathsep!r}), or call quack_mlir.set_bundle(path); "
                    "or let kernels be compiled on demand: quackc on PATH "
                    "or in QUACK_MLIR_QUACKC, the .qk descriptions in "
                    "QUACK_MLIR_KERNELS (where the source tree's kernels/ "
                    "is not beside the package), and QUACK_MLIR_JIT not 0 "
                    f"(it is {os.environ.get('QUACK_MLIR_JIT', 'unset')})")
            _bundle = BundleSet(spec)
        return _bundle


class KernelSource:
    """Where variants are found: the bundles, then the JIT (either may be
    None). Offers Bundle's `candidates` and `find`."""

    def __init__(self, bundle, jit):
        self.bundle = bundle
        self.jit = jit

    def _either(self, method, *args, device=None):
        if self.bundle is None:
            return getattr(self.jit, method)(*args)
        try:
            return getattr(self.bundle, method)(*args, device=device)
        except KernelNotFoundError as missing:
            if self.jit is None:
                raise
            try:
                return getattr(self.jit, method)(*args)
            except _jit.JitError as failed:
                raise _jit.JitError(f"{missing}; compiling it failed: "
                                    f"{failed}") from None

    def candidates(self, kernel, bindings, device=None):
        """The variants for `kernel` with these bindings, widest first
        (those of a tuning target for `device` first among equals)."""
        return self._either("candidates", kernel, bindings, device=device)

    def find(self, kernel, bindings, alignment, device=None):
        """The variant serving tensors of this alignment."""
        return self._either("find", kernel, bindings, alignment,
                            device=device)


# CUDA device index -> name.
_device_names = {}


def current_device_name():
    """The name of the current CUDA device (e.g. "NVIDIA H100 80GB HBM3"),
    which decides whether a tuning target's variants serve it;
    $QUACK_MLIR_DEVICE_NAME where set (empty: none). None without torch's
    CUDA or before CUDA is initialized (the architecture's variants
    only)."""
    env = os.environ.get("QUACK_MLIR_DEVICE_NAME")
    if env is not None:
        return env or None
    torch = sys.modules.get("torch")
    # Never the first use of CUDA (which a fork after it would break): the
    # ops ask once their tensors are on the device.
    if torch is None or not torch.cuda.is_initialized():
        return None
    try:
        index = torch.cuda.current_device()
        name = _device_names.get(index)
        if name is None:
            name = _device_names[index] = torch.cuda.get_device_name(index)
        return name
    except Exception:  # no CUDA device, or torch without CUDA
        return None


def get_source():
    """The KernelSource in use: the bundle path, if one is set, and the JIT,
    where quackc is found (jit.from_environment)."""
    global _source
    s = _source
    if s is not None:
        return s
    spec = _spec()
    try:
        jit = _jit.from_environment()
    except _jit.JitError as e:
        if not spec:
            raise
        # The bundles may serve everything: a broken JIT setting alone
        # should not stop the ops.
        warnings.warn(f"quack_mlir: not compiling kernels on demand: {e}",
                      RuntimeWarning, stacklevel=2)
        jit = None
    bundle = None
    if spec or jit is None:
        bundle = get_bundle()  # raises BundleError without either
    with _lock:
        if _source is None:
            _source = KernelSource(bundle, jit)
        return _source


def load_variant(variant):
    """Returns the loaded Kernel of a bundle Variant (loaded once)."""
    path = variant.metadata_path
    k = _loaded.get(path)
    if k is not None:
        return k
    from ._runtime import Kernel
    k = Kernel(path)
    with _lock:
        return _loaded.setdefault(path, k)


def get_kernel(kernel, bindings, alignment):
    """Returns the loaded Kernel serving `kernel` with these bindings for
    tensors of the given alignment; raises KernelNotFoundError if none."""
    device = current_device_name()
    key = (kernel, tuple(bindings.items()), alignment, device)
    k = _cache.get(key)
    if k is not None:
        return k
    k = load_variant(get_source().find(kernel, bindings, alignment, device))
    with _lock:
        return _cache.setdefault(key, k)

"""Where kernels come from: the bundle in use and a cache of loaded kernels."""

import os
import threading

from .bundle import Bundle, BundleError

_lock = threading.Lock()
_bundle_path = None
_bundle = None
# (kernel, bindings as a tuple, alignment of the actual tensors) -> Kernel.
_cache = {}
# Per-op caches of kernels (ops register theirs), emptied with _cache.
fast_caches = []


def set_bundle(path):
    """Uses the bundle directory `path` (overrides $QUACK_MLIR_BUNDLE).

    `None` goes back to $QUACK_MLIR_BUNDLE. Loaded kernels are forgotten.
    """
    global _bundle_path, _bundle
    with _lock:
        _bundle_path = None if path is None else os.fspath(path)
        _bundle = None
        _cache.clear()
        for cache in fast_caches:
            cache.clear()


def get_bundle():
    """Returns the Bundle in use, reading its index on first use."""
    global _bundle
    b = _bundle
    if b is not None:
        return b
    with _lock:
        if _bundle is None:
            path = _bundle_path or os.environ.get("QUACK_MLIR_BUNDLE")
            if not path:
                raise BundleError(
                    "no kernel bundle: set QUACK_MLIR_BUNDLE to a directory "
                    "written by `quackc --bundle`, or call "
                    "quack_mlir.set_bundle(path)")
            _bundle = Bundle(path)
        return _bundle


def get_kernel(kernel, bindings, alignment):
    """Returns the loaded Kernel serving `kernel` with these bindings for
    tensors of the given alignment; raises KernelNotFoundError if none."""
    key = (kernel, tuple(bindings.items()), alignment)
    k = _cache.get(key)
    if k is not None:
        return k
    from ._runtime import Kernel
    bundle = get_bundle()
    variant = bundle.find(kernel, bindings, alignment)
    k = Kernel(bundle.metadata_path(variant))
    with _lock:
        return _cache.setdefault(key, k)

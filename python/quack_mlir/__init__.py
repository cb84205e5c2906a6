"""quack_mlir: PyTorch ops that launch kernels compiled by quackc.

Kernels come from an ahead-of-time bundle directory (`quackc --bundle DIR`),
chosen by $QUACK_MLIR_BUNDLE or `set_bundle(path)`, and are launched through
libquack_runtime.so (found through $QUACK_MLIR_RUNTIME_LIB, beside this
package, or in $QUACK_MLIR_BUILD_DIR/lib).
"""

from ._kernels import get_bundle, set_bundle
from ._runtime import KernelError, RuntimeLibraryError
from .bundle import BundleError, KernelNotFoundError
from .rmsnorm import rmsnorm

__all__ = ["rmsnorm", "set_bundle", "get_bundle", "BundleError",
           "KernelNotFoundError", "KernelError", "RuntimeLibraryError"]

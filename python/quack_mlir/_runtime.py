"""ctypes binding of libquack_runtime.so (include/quack-c/Runtime.h).

Only the standard library is needed here, so that the binding can be imported
and tested on machines without torch or a GPU.
"""

import ctypes
import os
import struct
import threading

__all__ = ["RuntimeLibraryError", "KernelError", "Kernel", "find_library",
           "load_library", "float_arg"]

_LIB_NAME = "libquack_runtime.so"
_ERR_LEN = 2048

# quack_rt_status values.
OK = 0
STATUS_NAMES = {
    0: "QUACK_RT_OK",
    1: "QUACK_RT_ERROR_INVALID_ARGUMENT",
    2: "QUACK_RT_ERROR_INVALID_METADATA",
    3: "QUACK_RT_ERROR_IO",
    4: "QUACK_RT_ERROR_DRIVER_UNAVAILABLE",
    5: "QUACK_RT_ERROR_DRIVER",
    6: "QUACK_RT_ERROR_MISALIGNED",
    7: "QUACK_RT_ERROR_UNSUPPORTED",
}
PARAM_KINDS = ("rows", "matrix", "row_stride", "row", "per_row", "scalar",
               "workspace")


class RuntimeLibraryError(RuntimeError):
    """libquack_runtime.so could not be found or loaded."""


class KernelError(RuntimeError):
    """A runtime call failed; `status` is the quack_rt_status value."""

    def __init__(self, status, message):
        self.status = status
        super().__init__(f"{message} [{STATUS_NAMES.get(status, status)}]")


class _ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int),
                ("type", ctypes.c_char_p), ("role", ctypes.c_char_p),
                ("of", ctypes.c_int)]


def _candidates():
    env = os.environ.get("QUACK_MLIR_RUNTIME_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.join(here, _LIB_NAME)]
    build = os.environ.get("QUACK_MLIR_BUILD_DIR")
    if build:
        paths += [os.path.join(build, "lib", _LIB_NAME),
                  os.path.join(build, _LIB_NAME)]
    # A build tree beside the source checkout (python/quack_mlir -> build/lib).
    paths.append(os.path.join(here, os.pardir, os.pardir, "build", "lib",
                              _LIB_NAME))
    return paths


def find_library():
    """Returns the path of libquack_runtime.so, or raises RuntimeLibraryError.

    Looks at $QUACK_MLIR_RUNTIME_LIB (only there when set), then beside this
    package, then in $QUACK_MLIR_BUILD_DIR/lib, then in ../../build/lib.
    """
    tried = _candidates()
    for path in tried:
        if os.path.isfile(path):
            return os.path.abspath(path)
    raise RuntimeLibraryError(
        "cannot find libquack_runtime.so; tried: " + ", ".join(tried) +
        ". Build the QuackRuntime target and set QUACK_MLIR_BUILD_DIR to the "
        "build directory or QUACK_MLIR_RUNTIME_LIB to the library.")


_lib = None
_raw_launch = None
_lib_lock = threading.Lock()


def load_library():
    """Loads (once) and returns the runtime library with typed entry points."""
    global _lib
    if _lib is not None:
        return _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        path = find_library()
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise RuntimeLibraryError(f"cannot load {path}: {e}") from e
        c = ctypes
        kernel = c.c_void_p
        sig = {
            "quack_rt_api_version": (c.c_int, []),
            "quack_rt_status_name": (c.c_char_p, [c.c_int]),
            "quack_rt_driver_init": (c.c_int, [c.c_char_p, c.c_size_t]),
            "quack_rt_kernel_load": (c.c_int, [c.c_char_p, c.POINTER(kernel),
                                               c.c_char_p, c.c_size_t]),
            "quack_rt_kernel_create": (c.c_int, [c.c_char_p, c.c_void_p,
                                                 c.c_size_t, c.POINTER(kernel),
                                                 c.c_char_p, c.c_size_t]),
            "quack_rt_kernel_destroy": (None, [kernel]),
            "quack_rt_kernel_prepare": (c.c_int, [kernel, c.c_char_p,
                                                  c.c_size_t]),
            "quack_rt_kernel_launch": (c.c_int, [kernel, c.c_int64, c.c_void_p,
                                                 c.c_int, c.c_void_p,
                                                 c.c_char_p, c.c_size_t]),
            "quack_rt_kernel_workspace_size": (
                c.c_int, [kernel, c.c_int64, c.POINTER(c.c_uint64),
                          c.c_char_p, c.c_size_t]),
            "quack_rt_kernel_name": (c.c_char_p, [kernel]),
            "quack_rt_kernel_symbol": (c.c_char_p, [kernel]),
            "quack_rt_kernel_arch": (c.c_char_p, [kernel]),
            "quack_rt_kernel_hash": (c.c_char_p, [kernel]),
            "quack_rt_kernel_n": (c.c_int64, [kernel]),
            "quack_rt_kernel_alignment": (c.c_int64, [kernel]),
            "quack_rt_kernel_rows_per_cta": (c.c_int64, [kernel]),
            "quack_rt_kernel_num_args": (c.c_int, [kernel]),
            "quack_rt_kernel_num_params": (c.c_int, [kernel]),
            "quack_rt_kernel_param": (c.c_int, [kernel, c.c_int,
                                                c.POINTER(_ParamInfo)]),
            "quack_rt_kernel_binding": (c.c_char_p, [kernel, c.c_char_p]),
            "quack_rt_kernel_cluster_in_use": (
                c.c_int, [kernel, c.POINTER(c.c_uint), c.c_char_p,
                          c.c_size_t, c.c_char_p, c.c_size_t]),
            "quack_rt_kernel_num_cluster_fallbacks": (c.c_int, [kernel]),
        }
        for name, (restype, argtypes) in sig.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        if lib.quack_rt_api_version() != 1:
            raise RuntimeLibraryError(
                f"{path} has C API version {lib.quack_rt_api_version()}, "
                "this package needs version 1")
        # quack_rt_kernel_launch once more, from a second handle of the same
        # library, without argtypes: the hot path passes ready ctypes objects
        # and skips the per-argument conversion (about half the call's cost).
        global _raw_launch
        raw = ctypes.CDLL(path).quack_rt_kernel_launch
        raw.restype = c.c_int
        _raw_launch = raw
        _lib = lib
        return lib


def raw_launch_function():
    """quack_rt_kernel_launch without argtypes: every argument must be a
    ctypes object of the declared type (c_void_p handle, c_int64 m, the
    argument array, a Python int nargs, c_void_p stream, the error buffer,
    c_size_t length)."""
    load_library()
    return _raw_launch


def float_arg(value):
    """Returns the 64-bit pattern of `value` as a double (quack_rt_value.f)."""
    return struct.unpack("<q", struct.pack("<d", float(value)))[0]


class Param:
    __slots__ = ("name", "kind", "type", "role", "of")

    def __init__(self, name, kind, type_, role, of):
        self.name, self.kind, self.type, self.role, self.of = (
            name, kind, type_, role, of)

    def __repr__(self):
        return f"Param({self.name!r}, {self.kind}, {self.type})"


class Kernel:
    """A kernel loaded from its metadata file (and the cubin beside it).

    `launch(m, args, stream)` takes one 64-bit value per parameter after M,
    in metadata order: device addresses and integers as ints, floating-point
    scalars as `float_arg(x)`.
    """

    def __init__(self, metadata_path):
        lib = load_library()
        self._lib = lib
        self._handle = None
        self._err = ctypes.create_string_buffer(_ERR_LEN)
        handle = ctypes.c_void_p()
        status = lib.quack_rt_kernel_load(os.fsencode(metadata_path),
                                          ctypes.byref(handle), self._err,
                                          _ERR_LEN)
        if status != OK:
            raise KernelError(status, self._err.value.decode(errors="replace"))
        self._handle = handle
        self.path = str(metadata_path)
        self.name = lib.quack_rt_kernel_name(handle).decode()
        self.symbol = lib.quack_rt_kernel_symbol(handle).decode()
        self.arch = lib.quack_rt_kernel_arch(handle).decode()
        self.hash = lib.quack_rt_kernel_hash(handle).decode()
        self.n = lib.quack_rt_kernel_n(handle)
        self.alignment = lib.quack_rt_kernel_alignment(handle)
        self.rows_per_cta = lib.quack_rt_kernel_rows_per_cta(handle)
        self.num_args = lib.quack_rt_kernel_num_args(handle)
        # Variants on smaller clusters read with the kernel.
        self.num_cluster_fallbacks = \
            lib.quack_rt_kernel_num_cluster_fallbacks(handle)
        params = []
        info = _ParamInfo()
        for i in range(lib.quack_rt_kernel_num_params(handle)):
            lib.quack_rt_kernel_param(handle, i, ctypes.byref(info))
            params.append(Param(info.name.decode(), PARAM_KINDS[info.kind],
                                info.type.decode(), info.role.decode(),
                                info.of))
        self.params = params
        self._ArgArray = ctypes.c_int64 * max(self.num_args, 1)
        self._launch = lib.quack_rt_kernel_launch

    def binding(self, key):
        value = self._lib.quack_rt_kernel_binding(self._handle, key.encode())
        return None if value is None else value.decode()

    def prepare(self):
        """Loads the module into the current CUDA context (before a graph
        capture, say)."""
        status = self._lib.quack_rt_kernel_prepare(self._handle, self._err,
                                                   _ERR_LEN)
        if status != OK:
            raise KernelError(status, self._err.value.decode(errors="replace"))

    def cluster_in_use(self):
        """(cluster size, note) of the variant that serves the current CUDA
        context, loading it there: the kernel's own (note "") or, where the
        device cannot co-schedule its cluster (or $QUACK_RT_MAX_CLUSTER_SIZE
        rules it out), the largest cluster fallback that runs, with the
        note saying why."""
        size = ctypes.c_uint(0)
        note = ctypes.create_string_buffer(_ERR_LEN)
        status = self._lib.quack_rt_kernel_cluster_in_use(
            self._handle, ctypes.byref(size), note, _ERR_LEN, self._err,
            _ERR_LEN)
        if status != OK:
            raise KernelError(status, self._err.value.decode(errors="replace"))
        return size.value, note.value.decode(errors="replace")

    def workspace_size(self, m):
        """Bytes of workspace a launch over `m` rows needs on the current
        CUDA context's device (0 without sums over rows)."""
        out = ctypes.c_uint64(0)
        status = self._lib.quack_rt_kernel_workspace_size(
            self._handle, m, ctypes.byref(out), self._err, _ERR_LEN)
        if status != OK:
            raise KernelError(status, self._err.value.decode(errors="replace"))
        return out.value

    def launch(self, m, args, stream=0):
        """Launches over `m` rows on `stream` (a CUstream as an int)."""
        arr = self._ArgArray(*args)
        status = self._launch(self._handle, m, arr, len(args), stream,
                              self._err, _ERR_LEN)
        if status != OK:
            raise KernelError(status, self._err.value.decode(errors="replace"))

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None and self._lib is not None:
            self._lib.quack_rt_kernel_destroy(handle)
            self._handle = None

    def __repr__(self):
        return (f"Kernel({self.name!r}, N={self.n}, "
                f"alignment={self.alignment}, path={self.path!r})")


def driver_init():
    """Opens the CUDA driver; raises KernelError when there is none."""
    lib = load_library()
    err = ctypes.create_string_buffer(_ERR_LEN)
    status = lib.quack_rt_driver_init(err, _ERR_LEN)
    if status != OK:
        raise KernelError(status, err.value.decode(errors="replace"))

//===- fast.cpp - The eager ops' launch path in C++ -----------------------===//
//
// _quack_fast: the common case of each eager op (softmax, rmsnorm,
// layer_norm, cross_entropy forward and backward, which the autograd
// functions call too) checked, allocated and launched in one C call,
// without the Python interpreter's per-attribute cost. Every function
// returns None where its case is not the common one (a CPU tensor, an odd
// layout, a tensor subclass, autograd, M = 0, another current device, an
// allocation that failed); the Python op then takes its own path, which
// words every error. So this file checks only what decides
// between "launch" and "not mine", never what an error should say.
//
// Kernels are not found here. The first call of an (op, device, dtype, N)
// asks the Python resolver (quack_mlir._fast.resolve), which goes through
// the op's Launcher: the variant for the alignment of the call's pointers
// and row strides, the alignment terms of its metadata, its handle and the
// Python object that owns the handle (kept alive here until clear()).
// Later calls compute the same alignment bits from those terms and launch
// the remembered handle through quack_rt_kernel_launch, whose address the
// package passes in.
//
// Built by scripts/build-torch-ext.sh against the torch the package runs
// with; it links torch's C++ libraries and the Python C API, nothing of
// MLIR, and calls the runtime only through the function pointer.
//
//===----------------------------------------------------------------------===//

#include <Python.h>

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

// quack_rt_kernel_launch (include/quack-c/Runtime.h); its quack_rt_value is
// one 64-bit word.
using LaunchFn = int (*)(void *kernel, int64_t m, const int64_t *args,
                         int nargs, void *stream, char *err, size_t errLen);

// quack_rt_kernel_workspace_size.
using WorkspaceFn = int (*)(void *kernel, int64_t m, uint64_t *bytes, char *err,
                            size_t errLen);

LaunchFn launchFn = nullptr;
WorkspaceFn workspaceFn = nullptr;
// resolve(op, device, dtype, n, args) -> (terms, handle, nargs, owner).
PyObject *resolver = nullptr;
// KernelError(status, message).
PyObject *kernelError = nullptr;
// torch.nn.Parameter: accepted beside exact tensors (weights).
PyObject *parameterType = nullptr;

enum Op : int {
  kSoftmax,
  kRmsnorm,
  kLayerNorm,
  kCrossEntropy,
  kRmsnormBwd,
  kLayerNormBwd,
  kCrossEntropyBwd,
  kSoftmaxBwd
};
enum DType : int { kBF16, kF16, kF32 };
// Alignment is decided by the bits below 256 (as _launch._ALIGN_CAP).
constexpr uint64_t kAlignMask = 255;
constexpr size_t kErrLen = 2048;
// Rows of unread per-row statistics that go to the scratch buffer
// (_ops._SCRATCH_ROWS).
constexpr int64_t kScratchRows = 16384;
constexpr int kMaxDevices = 64;

struct Plan {
  void *handle = nullptr;
  PyObject *owner = nullptr;
  // Workspace bytes by M, for kernels with sums over rows (the size
  // depends on the variant, M and the device, which the family fixes).
  std::unordered_map<int64_t, uint64_t> workspace;
};

// Workspace sizes remembered per plan before the map starts over
// (_launch._WS_CACHE_MAX).
constexpr size_t kWorkspaceCacheMax = 256;

// The variants of one (op, device, dtype, N), by alignment bits.
struct Family {
  // (argument index, scale): pointers (1) and row strides (element size).
  std::vector<std::pair<int, int>> terms;
  int nargs = 0;
  Plan plans[kAlignMask + 1];

  uint64_t bits(const int64_t *args) const {
    uint64_t v = 0;
    for (const auto &[index, scale] : terms)
      v |= static_cast<uint64_t>(args[index]) * static_cast<uint64_t>(scale);
    return v & kAlignMask;
  }
};

std::unordered_map<uint64_t, std::unique_ptr<Family>> families;
// Launches made (for tests: which calls this path served).
uint64_t launches = 0;

// One f32 buffer of kScratchRows per device for statistics nobody reads;
// never freed (kernels on any stream may still be writing it).
at::Tensor *scratch[kMaxDevices] = {};

uint64_t familyKey(int op, int device, int dtype, int64_t n) {
  return (static_cast<uint64_t>(n) << 24) |
         (static_cast<uint64_t>(device) << 8) |
         (static_cast<uint64_t>(dtype) << 4) | static_cast<uint64_t>(op);
}

int dtypeCode(c10::ScalarType t) {
  switch (t) {
  case c10::ScalarType::BFloat16:
    return kBF16;
  case c10::ScalarType::Half:
    return kF16;
  case c10::ScalarType::Float:
    return kF32;
  default:
    return -1;
  }
}

// A plain tensor (or a Parameter), not a subclass that may redefine what
// its data is.
const at::Tensor *asTensor(PyObject *obj) {
  PyTypeObject *type = Py_TYPE(obj);
  if (!THPVariable_CheckExact(obj) &&
      type != reinterpret_cast<PyTypeObject *>(parameterType))
    return nullptr;
  return &THPVariable_Unpack(obj);
}

#ifdef QUACK_FAST_CPU_TESTING
// The build for tests without a GPU (QUACK_FAST_CPU_TESTING=1
// scripts/build-torch-ext.sh): CPU tensors stand for device 0's, launched on
// the null stream through whatever driver the runtime opened (a stand-in
// that records launches). Never loaded by the package outside tests.
constexpr bool kCpuTesting = true;
bool isDeviceTensor(const at::Tensor &t) { return t.is_cpu(); }
int deviceOf(const at::Tensor &) { return 0; }
int currentDevice() { return 0; }
void *currentStream(int) { return nullptr; }
bool capturing() { return false; }
#else
constexpr bool kCpuTesting = false;
bool isDeviceTensor(const at::Tensor &t) { return t.is_cuda(); }
int deviceOf(const at::Tensor &t) { return t.get_device(); }
int currentDevice() { return c10::cuda::current_device(); }
void *currentStream(int device) {
  return c10::cuda::getCurrentCUDAStream(device).stream();
}
bool capturing() {
  return c10::cuda::currentStreamCaptureStatusMayInitCtx() !=
         c10::cuda::CaptureStatus::None;
}
#endif

// A strided CUDA tensor on the current device.
bool onDevice(const at::Tensor &t, int device) {
  return isDeviceTensor(t) && t.layout() == c10::kStrided &&
         deviceOf(t) == device;
}

struct Rows {
  int64_t m = 0, n = 0, stride = 0;
  int dtype = -1, device = -1;
};

// x: [..., N] contiguous, or [M, N] with unit-stride rows that do not
// overlap; M >= 1 on the current device. Fills `r`.
bool fastRows(const at::Tensor &x, Rows &r) {
  if (!isDeviceTensor(x) || x.layout() != c10::kStrided || x.is_neg() ||
      x.has_names())
    return false;
  r.dtype = dtypeCode(x.scalar_type());
  int64_t nd = x.dim();
  if (r.dtype < 0 || nd == 0)
    return false;
  r.n = x.size(nd - 1);
  if (r.n <= 0 || r.n >= (int64_t(1) << 32))
    return false;
  if (x.is_contiguous()) {
    r.m = x.numel() / r.n;
    r.stride = r.n;
  } else if (nd == 2 && (x.stride(1) == 1 || r.n == 1)) {
    r.m = x.size(0);
    r.stride = x.stride(0);
    if (r.m > 1 && r.stride < r.n)
      return false;
  } else {
    return false;
  }
  if (r.m <= 0)
    return false;
  if (r.m == 1)
    r.stride = 0;
  r.device = deviceOf(x);
  return r.device >= 0 && r.device < kMaxDevices && r.device == currentDevice();
}

// v: [length] of x's dtype (`dtype` >= 0) or f32, unit stride, on the
// device.
bool fastVector(const at::Tensor &v, int64_t length, c10::ScalarType dtype,
                int device) {
  return onDevice(v, device) && v.scalar_type() == dtype && v.dim() == 1 &&
         v.size(0) == length && (length == 1 || v.stride(0) == 1);
}

// A new contiguous tensor of x's shape: for a contiguous x, with x's
// strides (which may differ in dimensions of size 1), as the Python path's
// empty_like.
at::Tensor emptyRows(const at::Tensor &x) {
  if (x.is_contiguous())
    return at::empty_strided(x.sizes(), x.strides(), x.options());
  return at::empty(x.sizes(), x.options());
}

at::Tensor emptyPerRow(const at::Tensor &x, int64_t m) {
  return at::empty({m}, x.options().dtype(at::kFloat));
}

// Where a per-row statistic nobody reads goes.
at::Tensor unreadPerRow(const at::Tensor &x, int64_t m, int device) {
  if (m <= kScratchRows) {
    if (scratch[device])
      return *scratch[device];
    // Not inside a graph capture, whose allocations are the graph's.
    if (!capturing()) {
      scratch[device] = new at::Tensor(emptyPerRow(x, kScratchRows));
      return *scratch[device];
    }
  }
  return emptyPerRow(x, m);
}

// Bumped by clear(): a resolver call that saw a clear() in between
// (it runs Python code, which may let another thread call set_bundle)
// answered for the old bundles, and its answer is not remembered.
uint64_t generation = 0;
// Such an answer, kept for the one launch that asked.
Plan uncached;

// Reads the resolver's answer into `fam` (terms, nargs) and `plan` (handle,
// owner: a new reference). False with a Python error set.
bool readAnswer(PyObject *res, int nargs, Family &fam, Plan &plan) {
  PyObject *terms, *handleObj, *owner;
  int got;
  if (!PyTuple_Check(res)) {
    PyErr_SetString(PyExc_TypeError,
                    "_quack_fast: the resolver must answer a tuple (terms, "
                    "handle, nargs, owner)");
    return false;
  }
  if (!PyArg_ParseTuple(res, "OOiO", &terms, &handleObj, &got, &owner))
    return false;
  void *handle = PyLong_AsVoidPtr(handleObj);
  if (!handle) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError, "_quack_fast: a null kernel handle");
    return false;
  }
  if (got != nargs) {
    PyErr_Format(PyExc_RuntimeError,
                 "_quack_fast: the kernel takes %d arguments after M, this "
                 "op passes %d",
                 got, nargs);
    return false;
  }
  PyObject *seq = PySequence_Fast(terms, "terms must be a sequence");
  if (!seq)
    return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    int index, scale;
    PyObject *term = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyTuple_Check(term) ||
        !PyArg_ParseTuple(term, "ii", &index, &scale) ||
        index < 0 || index >= nargs || scale <= 0 || (scale & (scale - 1))) {
      // Scales are element sizes: (a | b) * s = a * s | b * s needs a
      // power of two.
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError,
                        "_quack_fast: an alignment term out of range");
      Py_DECREF(seq);
      return false;
    }
    fam.terms.emplace_back(index, scale);
  }
  Py_DECREF(seq);
  fam.nargs = got;
  Py_INCREF(owner);
  plan.owner = owner;
  plan.handle = handle;
  return true;
}

// Asks the resolver for the variant serving `args` and remembers it; null
// with a Python error set on failure.
Plan *resolve(uint64_t key, int op, const Rows &r, const int64_t *args,
              int nargs) {
  PyObject *tuple = PyTuple_New(nargs);
  if (!tuple)
    return nullptr;
  for (int i = 0; i < nargs; ++i) {
    PyObject *v = PyLong_FromLongLong(args[i]);
    if (!v) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, i, v);
  }
  uint64_t before = generation;
  PyObject *res = PyObject_CallFunction(resolver, "iiiLN", op, r.device,
                                        r.dtype, (long long)r.n, tuple);
  if (!res)
    return nullptr;
  auto fam = std::make_unique<Family>();
  Plan answer;
  bool ok = readAnswer(res, nargs, *fam, answer);
  Py_DECREF(res);
  if (!ok)
    return nullptr;
  if (generation != before) {
    Py_XDECREF(uncached.owner);
    uncached = std::move(answer);
    return &uncached;
  }
  auto it = families.find(key);
  if (it == families.end())
    it = families.emplace(key, std::move(fam)).first;
  else if (it->second->terms != fam->terms || it->second->nargs != nargs) {
    Py_DECREF(answer.owner);
    PyErr_SetString(PyExc_RuntimeError,
                    "_quack_fast: variants of one kernel differ in their "
                    "parameters");
    return nullptr;
  }
  Plan &plan = it->second->plans[it->second->bits(args)];
  Py_XDECREF(plan.owner);
  plan = std::move(answer);
  return &plan;
}

int64_t pointer(const at::Tensor &t);

// Raises KernelError(status, err); returns false.
bool raiseKernelError(int status, const char *err) {
  PyObject *e = PyObject_CallFunction(
      kernelError, "iN", status,
      PyUnicode_DecodeUTF8(err, std::strlen(err), "replace"));
  if (e) {
    PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(e)), e);
    Py_DECREF(e);
  }
  return false;
}

// The variant of op's kernel serving `args`; null with a Python error set
// on failure.
Plan *find(int op, const Rows &r, const int64_t *args, int nargs) {
  uint64_t key = familyKey(op, r.device, r.dtype, r.n);
  auto it = families.find(key);
  if (it != families.end()) {
    Plan &p = it->second->plans[it->second->bits(args)];
    if (p.handle)
      return &p;
  }
  return resolve(key, op, r, args, nargs);
}

// Launches `plan` over r.m rows with `args` on the current stream. False
// with a Python error set on failure.
bool launchPlan(const Plan &plan, const Rows &r, const int64_t *args,
                int nargs) {
  void *stream = currentStream(r.device);
  char err[kErrLen];
  err[0] = 0;
  int status = launchFn(plan.handle, r.m, args, nargs, stream, err, kErrLen);
  launches += status == 0;
  return status == 0 || raiseKernelError(status, err);
}

// Launches op's kernel for `r` with `args`. False with a Python error set
// on failure.
bool launch(int op, const Rows &r, const int64_t *args, int nargs) {
  const Plan *plan = find(op, r, args, nargs);
  return plan && launchPlan(*plan, r, args, nargs);
}

// Like launch() for kernels with sums over rows, whose last argument is
// the workspace: a fresh f32 workspace of the size the variant needs for
// r.m rows (asked of the runtime once per M), allocated on the current
// stream so that the caching allocator orders its reuse.
bool launchWithWorkspace(int op, const Rows &r, const at::Tensor &like,
                         int64_t *args, int nargs) {
  // The placeholder is 0 while the variant is chosen, as in Python.
  args[nargs - 1] = 0;
  Plan *plan = find(op, r, args, nargs);
  if (!plan)
    return false;
  uint64_t bytes;
  auto it = plan->workspace.find(r.m);
  if (it != plan->workspace.end()) {
    bytes = it->second;
  } else {
    char err[kErrLen];
    err[0] = 0;
    int status = workspaceFn(plan->handle, r.m, &bytes, err, kErrLen);
    if (status != 0)
      return raiseKernelError(status, err);
    if (plan->workspace.size() >= kWorkspaceCacheMax)
      plan->workspace.clear();
    plan->workspace.emplace(r.m, bytes);
  }
  at::Tensor ws;
  if (bytes) {
    ws = at::empty({static_cast<int64_t>((bytes + 3) / 4)},
                   like.options().dtype(at::kFloat));
    args[nargs - 1] = pointer(ws);
  }
  // `ws` lives until the launch is queued.
  return launchPlan(*plan, r, args, nargs);
}

int64_t pointer(const at::Tensor &t) {
  return reinterpret_cast<int64_t>(t.data_ptr());
}

int64_t doubleBits(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

PyObject *wrap(at::Tensor t) { return THPVariable_Wrap(std::move(t)); }

// dy for rows x: x's dtype and shape, contiguous (what the Python path's
// rows_like() takes without a second look), on the device.
bool fastLike(const at::Tensor &v, const at::Tensor &x, int device) {
  return onDevice(v, device) && v.scalar_type() == x.scalar_type() &&
         v.sizes() == x.sizes() && v.is_contiguous();
}

// (a, b, ...) from tensors, or null with the Python error set.
template <typename... Ts> PyObject *wrapTuple(Ts &&...ts) {
  PyObject *items[] = {wrap(std::move(ts))...};
  constexpr Py_ssize_t size = sizeof...(Ts);
  PyObject *tuple = PyTuple_New(size);
  for (Py_ssize_t i = 0; i < size; ++i) {
    if (!items[i] || !tuple) {
      for (PyObject *item : items)
        Py_XDECREF(item);
      Py_XDECREF(tuple);
      return nullptr;
    }
  }
  for (Py_ssize_t i = 0; i < size; ++i)
    PyTuple_SET_ITEM(tuple, i, items[i]);
  return tuple;
}

// The call has `want` arguments and init() has run; else a Python error.
bool ready(const char *signature, Py_ssize_t nargs, Py_ssize_t want) {
  if (nargs != want) {
    PyErr_Format(PyExc_TypeError, "_quack_fast.%s takes %zd arguments, got %zd",
                 signature, want, nargs);
    return false;
  }
  if (launchFn)
    return true;
  PyErr_SetString(PyExc_RuntimeError, "_quack_fast: init() was not called");
  return false;
}

#define QUACK_FAST_NONE                                                        \
  do {                                                                         \
    Py_RETURN_NONE;                                                            \
  } while (0)

// Allocation failures and other torch errors fall back to the Python path,
// which raises torch's own exception; a Python exception raised inside
// torch (a dispatch mode's) propagates as it is.
#define QUACK_FAST_TRY try {
#define QUACK_FAST_CATCH                                                       \
  }                                                                            \
  catch (python_error & e) {                                                   \
    e.restore();                                                               \
    return nullptr;                                                            \
  }                                                                            \
  catch (...) {                                                                \
    if (PyErr_Occurred())                                                      \
      return nullptr;                                                          \
    Py_RETURN_NONE;                                                            \
  }

// softmax(x) -> y | None
PyObject *softmax(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready("softmax(x)", nargs, 1))
    return nullptr;
  QUACK_FAST_TRY
  const at::Tensor *x = asTensor(args[0]);
  Rows r;
  if (!x || !fastRows(*x, r))
    QUACK_FAST_NONE;
  if (at::GradMode::is_enabled() && x->requires_grad())
    QUACK_FAST_NONE;
  at::Tensor y = emptyRows(*x);
  // softmax_fwd(M, x, x.row_stride, y, y.row_stride)
  int64_t a[] = {pointer(*x), r.stride, pointer(y), r.m > 1 ? r.n : 0};
  if (!launch(kSoftmax, r, a, 4))
    return nullptr;
  return wrap(std::move(y));
  QUACK_FAST_CATCH
}

// rmsnorm(x, weight, eps, keep_rstd) -> y | (y, rstd) | None
PyObject *rmsnorm(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready("rmsnorm(x, weight, eps, keep_rstd)", nargs, 4))
    return nullptr;
  QUACK_FAST_TRY
  const at::Tensor *x = asTensor(args[0]);
  const at::Tensor *w = asTensor(args[1]);
  Rows r;
  if (!x || !w || !PyFloat_CheckExact(args[2]) || !fastRows(*x, r) ||
      !fastVector(*w, r.n, x->scalar_type(), r.device))
    QUACK_FAST_NONE;
  if (at::GradMode::is_enabled() && (x->requires_grad() || w->requires_grad()))
    QUACK_FAST_NONE;
  if (!PyBool_Check(args[3]))
    QUACK_FAST_NONE;
  bool keep = args[3] == Py_True;
  at::Tensor y = emptyRows(*x);
  at::Tensor rstd =
      keep ? emptyPerRow(*x, r.m) : unreadPerRow(*x, r.m, r.device);
  // rmsnorm_fwd(M, x, x.row_stride, w, eps, y, y.row_stride, rstd)
  int64_t a[] = {pointer(*x),  r.stride,
                 pointer(*w),  doubleBits(PyFloat_AS_DOUBLE(args[2])),
                 pointer(y),   r.m > 1 ? r.n : 0,
                 pointer(rstd)};
  if (!launch(kRmsnorm, r, a, 7))
    return nullptr;
  if (!keep)
    return wrap(std::move(y));
  return wrapTuple(std::move(y), std::move(rstd));
  QUACK_FAST_CATCH
}

// N from layer_norm's normalized_shape when it is N, (N,) or [N] (or a
// torch.Size); else -1.
int64_t normalizedN(PyObject *shape) {
  PyObject *item = shape;
  if (PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == 1)
    item = PyTuple_GET_ITEM(shape, 0);
  else if (PyList_CheckExact(shape) && PyList_GET_SIZE(shape) == 1)
    item = PyList_GET_ITEM(shape, 0);
  if (!PyLong_CheckExact(item))
    return -1;
  int64_t n = PyLong_AsLongLong(item);
  if (n == -1 && PyErr_Occurred())
    PyErr_Clear();
  return n;
}

// layer_norm(x, normalized_shape, weight, bias, eps, keep_stats)
//   -> y | (y, mean, rstd) | None
PyObject *layerNorm(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready("layer_norm(x, normalized_shape, weight, bias, eps, keep_stats)",
             nargs, 6))
    return nullptr;
  QUACK_FAST_TRY
  const at::Tensor *x = asTensor(args[0]);
  const at::Tensor *w = asTensor(args[2]);
  const at::Tensor *b = asTensor(args[3]);
  Rows r;
  if (!x || !w || !b || !PyFloat_CheckExact(args[4]) || !fastRows(*x, r) ||
      normalizedN(args[1]) != r.n ||
      !fastVector(*w, r.n, x->scalar_type(), r.device) ||
      !fastVector(*b, r.n, x->scalar_type(), r.device))
    QUACK_FAST_NONE;
  if (at::GradMode::is_enabled() &&
      (x->requires_grad() || w->requires_grad() || b->requires_grad()))
    QUACK_FAST_NONE;
  if (!PyBool_Check(args[5]))
    QUACK_FAST_NONE;
  bool keep = args[5] == Py_True;
  at::Tensor y = emptyRows(*x);
  // Unkept, the kernel writes both statistics of a row to one buffer in
  // turn, and nothing reads it.
  at::Tensor mean =
      keep ? emptyPerRow(*x, r.m) : unreadPerRow(*x, r.m, r.device);
  at::Tensor rstd = keep ? emptyPerRow(*x, r.m) : mean;
  // layernorm_fwd(M, x, x.row_stride, w, b, eps, y, y.row_stride, mean,
  //               rstd)
  int64_t a[] = {pointer(*x),
                 r.stride,
                 pointer(*w),
                 pointer(*b),
                 doubleBits(PyFloat_AS_DOUBLE(args[4])),
                 pointer(y),
                 r.m > 1 ? r.n : 0,
                 pointer(mean),
                 pointer(rstd)};
  if (!launch(kLayerNorm, r, a, 9))
    return nullptr;
  if (!keep)
    return wrap(std::move(y));
  return wrapTuple(std::move(y), std::move(mean), std::move(rstd));
  QUACK_FAST_CATCH
}

// An exact Python int that fits in 64 bits, in `value`.
bool exactInt(PyObject *obj, long long &value) {
  if (!PyLong_CheckExact(obj))
    return false;
  int overflow = 0;
  value = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (overflow || (value == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// cross_entropy(logits, target, ignore_index, keep_lse)
//   -> per-row loss | (loss, lse) | None
PyObject *crossEntropy(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready("cross_entropy(logits, target, ignore_index, keep_lse)", nargs, 4))
    return nullptr;
  QUACK_FAST_TRY
  const at::Tensor *x = asTensor(args[0]);
  const at::Tensor *t = asTensor(args[1]);
  Rows r;
  long long ignore;
  if (!x || !t || !exactInt(args[2], ignore) || !PyBool_Check(args[3]) ||
      x->dim() != 2 || !fastRows(*x, r) ||
      !fastVector(*t, r.m, at::kLong, r.device))
    QUACK_FAST_NONE;
  if (at::GradMode::is_enabled() && x->requires_grad())
    QUACK_FAST_NONE;
  bool keep = args[3] == Py_True;
  at::Tensor loss = emptyPerRow(*x, r.m);
  at::Tensor lse =
      keep ? emptyPerRow(*x, r.m) : unreadPerRow(*x, r.m, r.device);
  // cross_entropy_fwd(M, x, x.row_stride, target, ignore_index, loss, lse)
  int64_t a[] = {pointer(*x), r.stride,      pointer(*t),
                 ignore,      pointer(loss), pointer(lse)};
  if (!launch(kCrossEntropy, r, a, 6))
    return nullptr;
  if (!keep)
    return wrap(std::move(loss));
  return wrapTuple(std::move(loss), std::move(lse));
  QUACK_FAST_CATCH
}

// cross_entropy_backward(logits, target, lse, dloss, ignore_index)
//   -> dlogits | None (dloss f32 and contiguous; the Python path converts
//   others)
PyObject *crossEntropyBwd(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready("cross_entropy_backward(logits, target, lse, dloss, "
             "ignore_index)",
             nargs, 5))
    return nullptr;
  QUACK_FAST_TRY
  const at::Tensor *x = asTensor(args[0]);
  const at::Tensor *t = asTensor(args[1]);
  const at::Tensor *lse = asTensor(args[2]);
  const at::Tensor *dloss = asTensor(args[3]);
  Rows r;
  long long ignore;
  if (!x || !t || !lse || !dloss || !exactInt(args[4], ignore) ||
      x->dim() != 2 || !fastRows(*x, r) ||
      !fastVector(*t, r.m, at::kLong, r.device) ||
      !fastVector(*lse, r.m, at::kFloat, r.device) ||
      !fastVector(*dloss, r.m, at::kFloat, r.device))
    QUACK_FAST_NONE;
  at::Tensor dx = at::empty({r.m, r.n}, x->options());
  // cross_entropy_bwd(M, x, x.row_stride, target, lse, dloss, ignore_index,
  //                   dx, dx.row_stride)
  int64_t a[] = {pointer(*x),     r.stride, pointer(*t), pointer(*lse),
                 pointer(*dloss), ignore,   pointer(dx), r.m > 1 ? r.n : 0};
  if (!launch(kCrossEntropyBwd, r, a, 8))
    return nullptr;
  return wrap(std::move(dx));
  QUACK_FAST_CATCH
}

// softmax_backward(dy, y) -> dx | None
PyObject *softmaxBwd(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready("softmax_backward(dy, y)", nargs, 2))
    return nullptr;
  QUACK_FAST_TRY
  const at::Tensor *dy = asTensor(args[0]);
  const at::Tensor *y = asTensor(args[1]);
  Rows r;
  if (!dy || !y || !fastRows(*y, r) || !fastLike(*dy, *y, r.device))
    QUACK_FAST_NONE;
  at::Tensor dx = emptyRows(*y);
  int64_t rowStride = r.m > 1 ? r.n : 0;
  // softmax_bwd(M, dy, dy.row_stride, y, y.row_stride, dx, dx.row_stride)
  int64_t a[] = {pointer(*dy), rowStride,   pointer(*y),
                 r.stride,     pointer(dx), rowStride};
  if (!launch(kSoftmaxBwd, r, a, 6))
    return nullptr;
  return wrap(std::move(dx));
  QUACK_FAST_CATCH
}

// rmsnorm_backward(dy, x, weight, rstd) -> (dx, dweight) | None
PyObject *rmsnormBwd(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready("rmsnorm_backward(dy, x, weight, rstd)", nargs, 4))
    return nullptr;
  QUACK_FAST_TRY
  const at::Tensor *dy = asTensor(args[0]);
  const at::Tensor *x = asTensor(args[1]);
  const at::Tensor *w = asTensor(args[2]);
  const at::Tensor *rstd = asTensor(args[3]);
  Rows r;
  if (!dy || !x || !w || !rstd || !fastRows(*x, r) ||
      !fastLike(*dy, *x, r.device) ||
      !fastVector(*w, r.n, x->scalar_type(), r.device) ||
      !fastVector(*rstd, r.m, at::kFloat, r.device))
    QUACK_FAST_NONE;
  at::Tensor dx = emptyRows(*x);
  at::Tensor dw = at::empty({r.n}, w->options());
  int64_t rowStride = r.m > 1 ? r.n : 0;
  // rmsnorm_bwd(M, x, x.row_stride, w, dy, dy.row_stride, rstd, dx,
  //             dx.row_stride, dw, workspace)
  int64_t a[] = {
      pointer(*x),    r.stride,    pointer(*w), pointer(*dy), rowStride,
      pointer(*rstd), pointer(dx), rowStride,   pointer(dw),  0};
  if (!launchWithWorkspace(kRmsnormBwd, r, *x, a, 10))
    return nullptr;
  return wrapTuple(std::move(dx), std::move(dw));
  QUACK_FAST_CATCH
}

// layer_norm_backward(dy, x, weight, mean, rstd) -> (dx, dweight, dbias)
//   | None
PyObject *layerNormBwd(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (!ready("layer_norm_backward(dy, x, weight, mean, rstd)", nargs, 5))
    return nullptr;
  QUACK_FAST_TRY
  const at::Tensor *dy = asTensor(args[0]);
  const at::Tensor *x = asTensor(args[1]);
  const at::Tensor *w = asTensor(args[2]);
  const at::Tensor *mean = asTensor(args[3]);
  const at::Tensor *rstd = asTensor(args[4]);
  Rows r;
  if (!dy || !x || !w || !mean || !rstd || !fastRows(*x, r) ||
      !fastLike(*dy, *x, r.device) ||
      !fastVector(*w, r.n, x->scalar_type(), r.device) ||
      !fastVector(*mean, r.m, at::kFloat, r.device) ||
      !fastVector(*rstd, r.m, at::kFloat, r.device))
    QUACK_FAST_NONE;
  at::Tensor dx = emptyRows(*x);
  at::Tensor dw = at::empty({r.n}, w->options());
  at::Tensor db = at::empty({r.n}, w->options());
  int64_t rowStride = r.m > 1 ? r.n : 0;
  // layernorm_bwd(M, x, x.row_stride, w, dy, dy.row_stride, mean, rstd, dx,
  //               dx.row_stride, dw, db, workspace)
  int64_t a[] = {pointer(*x), r.stride,       pointer(*w),    pointer(*dy),
                 rowStride,   pointer(*mean), pointer(*rstd), pointer(dx),
                 rowStride,   pointer(dw),    pointer(db),    0};
  if (!launchWithWorkspace(kLayerNormBwd, r, *x, a, 12))
    return nullptr;
  return wrapTuple(std::move(dx), std::move(dw), std::move(db));
  QUACK_FAST_CATCH
}

// init(launch_address, workspace_size_address, resolve, KernelError,
//      Parameter)
PyObject *init(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError,
                    "_quack_fast.init(launch_address, workspace_size_address, "
                    "resolve, KernelError, Parameter) takes 5 arguments");
    return nullptr;
  }
  void *launch = PyLong_AsVoidPtr(args[0]);
  void *workspace = launch ? PyLong_AsVoidPtr(args[1]) : nullptr;
  if (!launch || !workspace) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError,
                      "_quack_fast.init: a function address is null");
    return nullptr;
  }
  if (!PyCallable_Check(args[2]) || !PyCallable_Check(args[3]) ||
      !PyType_Check(args[4])) {
    PyErr_SetString(PyExc_TypeError,
                    "_quack_fast.init: resolve and KernelError must be "
                    "callable and Parameter a type");
    return nullptr;
  }
  for (int i = 2; i < 5; ++i)
    Py_INCREF(args[i]);
  Py_XDECREF(resolver);
  Py_XDECREF(kernelError);
  Py_XDECREF(parameterType);
  resolver = args[2];
  kernelError = args[3];
  parameterType = args[4];
  launchFn = reinterpret_cast<LaunchFn>(launch);
  workspaceFn = reinterpret_cast<WorkspaceFn>(workspace);
  Py_RETURN_NONE;
}

// clear(): forgets every remembered variant (a new bundle).
PyObject *clear(PyObject *, PyObject *) {
  // Moved out first: releasing an owner may run Python code.
  auto old = std::move(families);
  families.clear();
  ++generation;
  for (auto &entry : old)
    for (Plan &plan : entry.second->plans)
      Py_XDECREF(plan.owner);
  Py_RETURN_NONE;
}

// size(): how many variants are remembered (for tests).
PyObject *size(PyObject *, PyObject *) {
  Py_ssize_t count = 0;
  for (auto &entry : families)
    for (const Plan &plan : entry.second->plans)
      count += plan.handle != nullptr;
  return PyLong_FromSsize_t(count);
}

// launches(): how many launches this path made (for tests).
PyObject *launchCount(PyObject *, PyObject *) {
  return PyLong_FromUnsignedLongLong(launches);
}

using FastFn = PyObject *(*)(PyObject *, PyObject *const *, Py_ssize_t);

// A METH_FASTCALL entry of the method table.
PyMethodDef fastcall(const char *name, FastFn fn, const char *doc) {
  return {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void *>(fn)),
          METH_FASTCALL, doc};
}

PyMethodDef methods[] = {
    fastcall(
        "init", init,
        "init(launch_address, workspace_size_address, resolve, KernelError, "
        "Parameter)"),
    {"clear", clear, METH_NOARGS, "Forgets every remembered variant."},
    {"size", size, METH_NOARGS, "The number of remembered variants."},
    {"launches", launchCount, METH_NOARGS,
     "The number of launches this path made."},
    fastcall("softmax", softmax,
             "softmax(x) -> y, or None where the Python path serves"),
    fastcall("rmsnorm", rmsnorm,
             "rmsnorm(x, weight, eps, keep_rstd) -> y or (y, rstd), or None"),
    fastcall(
        "layer_norm", layerNorm,
        "layer_norm(x, normalized_shape, weight, bias, eps, keep_stats) -> y "
        "or (y, mean, rstd), or None"),
    fastcall(
        "cross_entropy", crossEntropy,
        "cross_entropy(logits, target, ignore_index, keep_lse) -> per-row loss "
        "or (loss, lse), or None"),
    fastcall(
        "cross_entropy_backward", crossEntropyBwd,
        "cross_entropy_backward(logits, target, lse, dloss, ignore_index) -> "
        "dlogits, or None"),
    fastcall("softmax_backward", softmaxBwd,
             "softmax_backward(dy, y) -> dx, or None"),
    fastcall("rmsnorm_backward", rmsnormBwd,
             "rmsnorm_backward(dy, x, weight, rstd) -> (dx, dweight), or None"),
    fastcall("layer_norm_backward", layerNormBwd,
             "layer_norm_backward(dy, x, weight, mean, rstd) -> (dx, dweight, "
             "dbias), or None"),
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT,
                         "_quack_fast",
                         "The eager ops' launch path in C++.",
                         -1,
                         methods,
                         nullptr,
                         nullptr,
                         nullptr,
                         nullptr};

} // namespace

#ifndef QUACK_FAST_TORCH_VERSION
#error "build with -DQUACK_FAST_TORCH_VERSION=\"<torch.__version__>\""
#endif

// The module reads torch's objects through inline code compiled here, so
// it serves only the torch it was built against: torch_version says which
// (the package refuses the module under any other).
PyMODINIT_FUNC PyInit__quack_fast() {
  PyObject *m = PyModule_Create(&moduleDef);
  if (m && (PyModule_AddStringConstant(m, "torch_version",
                                       QUACK_FAST_TORCH_VERSION) < 0 ||
            PyModule_AddIntConstant(m, "cpu_testing", kCpuTesting) < 0)) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}

"""Kernels compiled on demand by quackc, kept in an on-disk cache.

Where no bundle serves a kernel and quackc is at hand, the ops compile the
variant they need (one kernel, one set of bindings, one alignment class,
with its cluster fallbacks) into a one-variant bundle in the cache and use
it from there. The cache entry's name is a sha256 over everything that
decides the cubin:

- the description (the text of the .qk file that defines the kernel),
- the kernel's name and its bindings,
- the alignment class and the target architecture,
- the compiler: `quackc --version` (quack's version, the sha256 of the
  tuning tables compiled into it, LLVM's version, the ptxas it runs and
  ptxas' version) and the sha256 of the quackc executable itself.

Variants compiled here take their configs from the architecture's table
(kernels/tuning/sm_90.tsv), not from a tuning target's: on an H100, the
catalogue's bundles (scripts/build-catalogue.sh) carry those.

The settings, read from the environment when the JIT is first used:

- QUACK_MLIR_JIT: "0" turns it off.
- QUACK_MLIR_QUACKC: the quackc to run (default: `quackc` on PATH).
- QUACK_MLIR_KERNELS: the directory of .qk descriptions (default: the
  source tree's kernels/ beside this package, when it is there).
- QUACK_MLIR_CACHE: the cache directory (default: $XDG_CACHE_HOME/quack_mlir
  or ~/.cache/quack_mlir).
- QUACK_MLIR_ARCH: the target (default sm_90).

Entries are written to a temporary directory and renamed into place, so
that processes sharing a cache never see half an entry. This module needs
neither torch nor the runtime library.
"""

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading

from .bundle import Bundle, KernelNotFoundError, _binding_text, \
    _format_bindings

__all__ = ["JitError", "JitCompiler", "from_environment", "CLASSES"]

# The alignment classes quackc compiles, widest first (bytes).
CLASSES = (16, 8, 4, 2, 1)
_KERNEL_RE = re.compile(r"^\s*kernel\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


class JitError(KernelNotFoundError):
    """quackc could not compile the variant asked for, or is unusable."""


def _sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _default_kernels_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.normpath(os.path.join(here, os.pardir, os.pardir,
                                         "kernels"))
    return tree if os.path.isdir(tree) else None


def _default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "quack_mlir")


class JitCompiler:
    """Compiles variants with `quackc` from the descriptions in
    `kernels_dir` into `cache_dir`."""

    def __init__(self, quackc, kernels_dir, cache_dir, arch="sm_90"):
        self.quackc = os.path.abspath(quackc)
        self.kernels_dir = os.path.abspath(kernels_dir)
        self.cache_dir = os.path.abspath(cache_dir)
        self.arch = arch
        self._lock = threading.Lock()
        self._identity = None
        self._descriptions = None
        # (kernel, bindings, class) -> the cached Bundle.
        self._bundles = {}

    def __repr__(self):
        return (f"JitCompiler({self.quackc!r}, kernels={self.kernels_dir!r}, "
                f"cache={self.cache_dir!r}, arch={self.arch!r})")

    # --- what the key covers ----------------------------------------------

    def identity(self):
        """The compiler's part of every key: `quackc --version` and the
        sha256 of the executable."""
        if self._identity is None:
            try:
                r = subprocess.run([self.quackc, "--version"],
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True,
                                   timeout=60)
            except OSError as e:
                raise JitError(f"cannot run quackc ({self.quackc}): {e}") \
                    from None
            if r.returncode != 0:
                raise JitError(f"'{self.quackc} --version' failed: "
                               f"{r.stdout.strip()}")
            if "ptxas: not found" in r.stdout:
                raise JitError(f"quackc ({self.quackc}) finds no ptxas: "
                               "put the CUDA Toolkit's bin directory on "
                               "PATH or set QUACK_PTXAS")
            self._identity = (r.stdout.strip() + "\nquackc sha256 " +
                              _sha256_file(self.quackc))
        return self._identity

    def description(self, kernel):
        """The .qk file that defines `kernel`."""
        if self._descriptions is None:
            found = {}
            try:
                names = sorted(os.listdir(self.kernels_dir))
            except OSError as e:
                raise JitError(f"cannot list the kernel descriptions in "
                               f"{self.kernels_dir}: {e}") from None
            for name in names:
                if not name.endswith(".qk"):
                    continue
                path = os.path.join(self.kernels_dir, name)
                with open(path, encoding="utf-8") as f:
                    for k in _KERNEL_RE.findall(f.read()):
                        found.setdefault(k, path)
            self._descriptions = found
        path = self._descriptions.get(kernel)
        if path is None:
            raise JitError(f"no description of kernel '{kernel}' in "
                           f"{self.kernels_dir} (its .qk files define "
                           f"{', '.join(sorted(self._descriptions)) or 'none'})")
        return path

    def key(self, kernel, bindings, alignment_class, source=None):
        """The cache entry's name for one variant (`source`: the
        description's bytes, read here if not given)."""
        if source is None:
            with open(self.description(kernel), "rb") as f:
                source = f.read()
        h = hashlib.sha256()
        for part in (self.identity().encode(), source, kernel.encode(),
                     _format_bindings(bindings).encode(),
                     str(alignment_class).encode(), self.arch.encode()):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
        return h.hexdigest()

    # --- variants -----------------------------------------------------------

    def bundle(self, kernel, bindings, alignment_class=16):
        """The one-variant Bundle of `kernel` with `bindings` in the given
        alignment class (its variant may need less), compiled if the cache
        does not hold it yet."""
        if alignment_class not in CLASSES:
            raise ValueError(f"alignment class {alignment_class} is not one "
                             f"of {CLASSES}")
        return self._bundle(kernel, bindings, alignment_class, compile=True)

    def _bundle(self, kernel, bindings, alignment_class, compile):
        memo = (kernel, tuple(sorted(bindings.items())), alignment_class)
        b = self._bundles.get(memo)
        if b is not None:
            return b
        with self._lock:
            b = self._bundles.get(memo)
            if b is not None:
                return b
            path = self.description(kernel)
            with open(path, "rb") as f:
                source = f.read()
            entry = self._entry(self.key(kernel, bindings, alignment_class,
                                         source))
            if not os.path.isfile(os.path.join(entry, "index.json")):
                if not compile:
                    return None
                # Key the new entry on the compiler as it is now (it may
                # have been rebuilt since this process first asked).
                self._identity = None
                entry = self._entry(self.key(kernel, bindings,
                                             alignment_class, source))
                if not os.path.isfile(os.path.join(entry, "index.json")):
                    self._compile(kernel, bindings, alignment_class, path,
                                  source, entry)
            b = Bundle(entry)
            self._bundles[memo] = b
        return b

    def _entry(self, key):
        return os.path.join(self.cache_dir, key[:2], key)

    def candidates(self, kernel, bindings):
        """As Bundle.candidates: the widest variant quackc makes."""
        return self.bundle(kernel, bindings).candidates(kernel, bindings)

    def find(self, kernel, bindings, alignment):
        """As Bundle.find: the variant of the widest class that divides
        `alignment`."""
        cls = next(c for c in CLASSES if alignment % c == 0)
        # A wider class's variant already at hand may need no more (N = 7
        # gets 2-byte accesses in every class).
        for wider in CLASSES[:CLASSES.index(cls)]:
            b = self._bundle(kernel, bindings, wider, compile=False)
            if b is not None:
                try:
                    return b.find(kernel, bindings, alignment)
                except KernelNotFoundError:
                    pass
        return self.bundle(kernel, bindings, cls).find(kernel, bindings,
                                                       alignment)

    def _compile(self, kernel, bindings, alignment_class, path, source,
                 entry):
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".tmp-", dir=os.path.dirname(entry))
        try:
            # Compile the bytes the key covers, not the file as it may be
            # by now (under its own name, which diagnostics show).
            qk = os.path.join(tmp, "src", os.path.basename(path))
            os.makedirs(os.path.dirname(qk))
            with open(qk, "wb") as f:
                f.write(source)
            out = os.path.join(tmp, "bundle")
            cmd = [self.quackc, qk, f"--kernel={kernel}",
                   f"--bundle={out}", f"--arch={self.arch}",
                   f"--alignments={alignment_class}", "--jobs=1"]
            for name, value in sorted(bindings.items()):
                cmd += ["-D", f"{name}={_binding_text(value)}"]
            try:
                r = subprocess.run(cmd, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True,
                                   timeout=600)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise JitError(f"cannot run quackc for {kernel} "
                               f"({_format_bindings(bindings)}): {e}") \
                    from None
            if r.returncode != 0:
                raise JitError(
                    f"quackc cannot compile {kernel} "
                    f"({_format_bindings(bindings)}, alignment class "
                    f"{alignment_class}):\n"
                    f"{r.stderr.replace(qk, path).strip()}")
            # mkdtemp's 0700, as the umask would have it for others sharing
            # the cache.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(out, 0o777 & ~umask)
            self._publish(out, entry)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @staticmethod
    def _publish(out, entry):
        """Renames the finished bundle `out` to `entry`."""
        for _ in range(2):
            try:
                os.rename(out, entry)
                return
            except OSError as e:
                if os.path.isfile(os.path.join(entry, "index.json")):
                    return  # another process got there first: as good
                if not os.path.isdir(entry):
                    raise JitError(f"cannot write the cache entry {entry}: "
                                   f"{e}") from None
                # A directory without index.json was left by something
                # else than this module: move it aside and try again.
                trash = tempfile.mkdtemp(prefix=".broken-",
                                         dir=os.path.dirname(entry))
                try:
                    os.rename(entry, os.path.join(trash, "entry"))
                except OSError:
                    pass
                shutil.rmtree(trash, ignore_errors=True)
        raise JitError(f"cannot write the cache entry {entry}: a directory "
                       "without index.json is in the way")


def from_environment():
    """The JitCompiler the environment describes, or None where the JIT is
    off or quackc or the descriptions cannot be found."""
    if os.environ.get("QUACK_MLIR_JIT", "1") == "0":
        return None
    quackc = os.environ.get("QUACK_MLIR_QUACKC") or shutil.which("quackc")
    kernels = os.environ.get("QUACK_MLIR_KERNELS") or _default_kernels_dir()
    if not quackc or not kernels:
        return None
    if not os.path.isfile(quackc):
        raise JitError(f"QUACK_MLIR_QUACKC is {quackc}, which does not exist")
    if not os.path.isdir(kernels):
        raise JitError(f"QUACK_MLIR_KERNELS is {kernels}, which is not a "
                       "directory")
    cache = os.environ.get("QUACK_MLIR_CACHE") or _default_cache_dir()
    return JitCompiler(quackc, kernels, cache,
                       os.environ.get("QUACK_MLIR_ARCH", "sm_90"))

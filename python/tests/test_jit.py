"""The on-demand compiler (quack_mlir.jit): cache keys, compiles into the
cache, reuse, errors, and its place behind the bundles. Needs quackc (built
in $QUACK_MLIR_BUILD_DIR, or $QUACK_MLIR_QUACKC) and ptxas; no GPU, no
torch."""

import json
import os
import shutil
import stat
import subprocess

import pytest

import quack_mlir
from quack_mlir import _kernels
from quack_mlir import bundle as qb
from quack_mlir import jit

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir,
                                    os.pardir))
KERNELS = os.path.join(ROOT, "kernels")
RMS = {"T": "bf16", "TW": "bf16", "N": 64, "RESIDUAL": False,
       "BIAS": False, "OFFSET": False}


def _quackc():
    path = os.environ.get("QUACK_MLIR_QUACKC")
    if not path and os.environ.get("QUACK_MLIR_BUILD_DIR"):
        path = os.path.join(os.environ["QUACK_MLIR_BUILD_DIR"], "bin",
                            "quackc")
    if not path or not os.path.isfile(path):
        return None
    r = subprocess.run([path, "--version"], stdout=subprocess.PIPE,
                       text=True)
    return path if "ptxas: not found" not in r.stdout else None


QUACKC = _quackc()
needs_quackc = pytest.mark.skipif(
    QUACKC is None, reason="needs quackc with ptxas (set QUACK_MLIR_BUILD_DIR "
    "or QUACK_MLIR_QUACKC)")


def counting(tmp_path, real):
    """A quackc wrapper that logs each compile (not --version) to a file."""
    log = tmp_path / "calls"
    wrapper = tmp_path / "quackc"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case "$1" in --version) ;; *) echo x >> "{log}";; esac\n'
        f'exec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return str(wrapper), log


def calls(log):
    return len(log.read_text().splitlines()) if log.exists() else 0


@needs_quackc
def test_compiles_into_the_cache_and_reuses_it(tmp_path):
    wrapper, log = counting(tmp_path, QUACKC)
    cache = tmp_path / "cache"
    c = jit.JitCompiler(wrapper, KERNELS, cache)
    [v] = c.candidates("rmsnorm_fwd", RMS)
    assert v.kernel == "rmsnorm_fwd" and v.alignment == 16
    md = json.loads(open(v.metadata_path).read())
    assert md["N"] == 64 and md["bindings"]["T"] == "bf16"
    assert os.path.isfile(os.path.join(os.path.dirname(v.metadata_path),
                                       md["cubin"]))
    assert calls(log) == 1
    # The same compiler in this process, and a fresh one (a new process):
    # no compile.
    assert c.find("rmsnorm_fwd", RMS, 256).metadata_path == v.metadata_path
    again = jit.JitCompiler(wrapper, KERNELS, cache)
    assert again.candidates("rmsnorm_fwd", RMS)[0].metadata_path == \
        v.metadata_path
    assert calls(log) == 1
    # Rows 4 bytes off a 16-byte line: a narrower class, compiled once.
    narrow = again.find("rmsnorm_fwd", RMS, 4)
    assert narrow.alignment == 4 and calls(log) == 2
    assert again.find("rmsnorm_fwd", RMS, 12).metadata_path == \
        narrow.metadata_path
    assert calls(log) == 2
    # Nothing half-written is left beside the entries, which others
    # sharing the cache can read (the umask's mode, not mkdtemp's 0700).
    leftovers = [p for p in cache.rglob(".tmp-*")]
    assert leftovers == []
    umask = os.umask(0)
    os.umask(umask)
    entry = os.path.dirname(v.metadata_path)
    assert stat.S_IMODE(os.stat(entry).st_mode) == 0o777 & ~umask


@needs_quackc
def test_a_wider_class_that_needs_no_more_is_reused(tmp_path):
    wrapper, log = counting(tmp_path, QUACKC)
    c = jit.JitCompiler(wrapper, KERNELS, tmp_path / "cache")
    seven = dict(RMS, N=7)
    [v] = c.candidates("rmsnorm_fwd", seven)
    assert v.alignment == 2  # 2-byte accesses in every class
    assert c.find("rmsnorm_fwd", seven, 2) is v
    again = jit.JitCompiler(wrapper, KERNELS, tmp_path / "cache")
    assert again.find("rmsnorm_fwd", seven, 2).metadata_path == \
        v.metadata_path
    assert calls(log) == 1


@needs_quackc
def test_an_entry_in_the_way_is_replaced(tmp_path):
    c = jit.JitCompiler(QUACKC, KERNELS, tmp_path / "cache")
    key = c.key("rmsnorm_fwd", RMS, 16)
    broken = tmp_path / "cache" / key[:2] / key
    broken.mkdir(parents=True)
    (broken / "junk").write_text("left by a crash")
    [v] = c.candidates("rmsnorm_fwd", RMS)
    assert os.path.dirname(v.metadata_path) == str(broken)
    assert not (broken / "junk").exists()


@needs_quackc
def test_key_covers_what_decides_the_cubin(tmp_path):
    kernels = tmp_path / "kernels"
    shutil.copytree(KERNELS, kernels)
    c = jit.JitCompiler(QUACKC, kernels, tmp_path / "cache")
    base = c.key("rmsnorm_fwd", RMS, 16)
    assert base == c.key("rmsnorm_fwd", dict(reversed(RMS.items())), 16)
    assert base != c.key("rmsnorm_fwd", dict(RMS, N=128), 16)
    assert base != c.key("rmsnorm_fwd", dict(RMS, T="f32", TW="f32"), 16)
    assert base != c.key("rmsnorm_fwd", dict(RMS, RESIDUAL=True), 16)
    assert base != c.key("rmsnorm_bwd", RMS, 16)
    assert base != c.key("rmsnorm_fwd", RMS, 8)
    other_arch = jit.JitCompiler(QUACKC, kernels, tmp_path / "cache",
                                 arch="sm_90a")
    assert base != other_arch.key("rmsnorm_fwd", RMS, 16)
    # The description's text.
    qk = kernels / "rmsnorm.qk"
    qk.write_text(qk.read_text() + "\n# edited\n")
    edited = jit.JitCompiler(QUACKC, kernels, tmp_path / "cache")
    assert base != edited.key("rmsnorm_fwd", RMS, 16)
    # The compiler: its --version (tuning table, ptxas) and its executable.
    assert "tuning table sm_90.tsv: sha256" in c.identity()
    assert "ptxas:" in c.identity()
    copy = tmp_path / "quackc-copy"
    shutil.copy(QUACKC, copy)
    with open(copy, "ab") as f:
        f.write(b"\0")
    changed = jit.JitCompiler(str(copy), KERNELS, tmp_path / "cache")
    assert c.identity() != changed.identity()


@needs_quackc
def test_errors_name_the_problem(tmp_path):
    c = jit.JitCompiler(QUACKC, KERNELS, tmp_path / "cache")
    with pytest.raises(jit.JitError, match="no description of kernel "
                       "'frobnicate'.*rmsnorm_fwd"):
        c.candidates("frobnicate", {"T": "bf16"})
    # quackc's own message comes through, naming the description itself;
    # the failure is not cached.
    wrapper, log = counting(tmp_path, QUACKC)
    c = jit.JitCompiler(wrapper, KERNELS, tmp_path / "cache")
    with pytest.raises(jit.JitError, match="(?s)quackc cannot compile "
                       "rmsnorm_fwd.*kernels/rmsnorm.qk:[0-9]+:[0-9]+: "
                       "error: .*not a positive integer"):
        c.candidates("rmsnorm_fwd", dict(RMS, N=0))
    assert not any(p.name.startswith(".tmp-")
                   for p in (tmp_path / "cache").rglob("*"))
    with pytest.raises(jit.JitError):
        c.candidates("rmsnorm_fwd", dict(RMS, N=0))
    assert calls(log) == 2
    with pytest.raises(ValueError, match="alignment class 3"):
        c.bundle("rmsnorm_fwd", RMS, 3)
    broken = jit.JitCompiler(str(tmp_path / "nope"), KERNELS, tmp_path)
    with pytest.raises(jit.JitError, match="cannot run quackc"):
        broken.candidates("rmsnorm_fwd", RMS)


def test_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("QUACK_MLIR_JIT", "0")
    assert jit.from_environment() is None
    monkeypatch.setenv("QUACK_MLIR_JIT", "1")
    monkeypatch.setenv("QUACK_MLIR_QUACKC", str(tmp_path / "missing"))
    with pytest.raises(jit.JitError, match="does not exist"):
        jit.from_environment()
    fake = tmp_path / "quackc"
    fake.write_text("#!/bin/sh\n")
    monkeypatch.setenv("QUACK_MLIR_QUACKC", str(fake))
    monkeypatch.setenv("QUACK_MLIR_KERNELS", str(tmp_path / "nokernels"))
    with pytest.raises(jit.JitError, match="not a directory"):
        jit.from_environment()
    monkeypatch.setenv("QUACK_MLIR_KERNELS", KERNELS)
    monkeypatch.setenv("QUACK_MLIR_CACHE", str(tmp_path / "c"))
    monkeypatch.setenv("QUACK_MLIR_ARCH", "sm_90a")
    c = jit.from_environment()
    assert (c.quackc, c.kernels_dir, c.cache_dir, c.arch) == (
        str(fake), KERNELS, str(tmp_path / "c"), "sm_90a")
    monkeypatch.delenv("QUACK_MLIR_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert jit.from_environment().cache_dir == str(tmp_path / "xdg" /
                                                   "quack_mlir")


@needs_quackc
def test_behind_the_bundles(tmp_path, monkeypatch):
    """A bundle's variant wins; what it lacks comes from the JIT; without
    either, the error says how to get kernels."""
    bundle = tmp_path / "bundle"
    subprocess.run([QUACKC, os.path.join(KERNELS, "rmsnorm.qk"),
                    "--kernel=rmsnorm_fwd", f"--bundle={bundle}",
                    "--alignments=16", "-D", "T=bf16", "-D", "TW=T",
                    "-D", "N=64", "-D", "RESIDUAL=false", "-D", "BIAS=false",
                    "-D", "OFFSET=false"], check=True,
                   stdout=subprocess.DEVNULL)
    wrapper, log = counting(tmp_path, QUACKC)
    monkeypatch.setenv("QUACK_MLIR_JIT", "1")
    monkeypatch.setenv("QUACK_MLIR_QUACKC", wrapper)
    monkeypatch.setenv("QUACK_MLIR_KERNELS", KERNELS)
    monkeypatch.setenv("QUACK_MLIR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("QUACK_MLIR_BUNDLE", str(bundle))
    quack_mlir.set_bundle(None)
    try:
        source = _kernels.get_source()
        [v] = source.candidates("rmsnorm_fwd", RMS)
        assert v.metadata_path.startswith(str(bundle))
        assert source.find("rmsnorm_fwd", RMS, 16) is v
        assert calls(log) == 0
        # The bundle has the 16-byte class only.
        narrow = source.find("rmsnorm_fwd", RMS, 8)
        assert narrow.alignment == 8
        assert narrow.metadata_path.startswith(str(tmp_path / "cache"))
        # N = 128 is not in the bundle at all.
        other = source.candidates("rmsnorm_fwd", dict(RMS, N=128))
        assert other[0].metadata_path.startswith(str(tmp_path / "cache"))
        assert calls(log) == 2
        # Where the JIT fails too, both say why.
        with pytest.raises(jit.JitError, match="(?s)no kernel for "
                           "rmsnorm_fwd.*compiling it failed: quackc cannot "
                           "compile"):
            source.candidates("rmsnorm_fwd", dict(RMS, N=0))
        # A JIT setting that is broken does not stop a bundle.
        monkeypatch.setenv("QUACK_MLIR_QUACKC", str(tmp_path / "missing"))
        quack_mlir.set_bundle(None)
        with pytest.warns(RuntimeWarning, match="not compiling kernels on "
                          "demand: QUACK_MLIR_QUACKC"):
            source = _kernels.get_source()
        assert source.jit is None
        assert source.candidates("rmsnorm_fwd", RMS)[0] is not None
        monkeypatch.setenv("QUACK_MLIR_QUACKC", wrapper)
        # Without the JIT, the bundle's error stands.
        monkeypatch.setenv("QUACK_MLIR_JIT", "0")
        quack_mlir.set_bundle(None)
        with pytest.raises(qb.KernelNotFoundError, match="no kernel for "
                           "rmsnorm_fwd"):
            _kernels.get_source().candidates("rmsnorm_fwd",
                                             dict(RMS, N=128))
        # Neither a bundle nor the JIT.
        monkeypatch.delenv("QUACK_MLIR_BUNDLE")
        quack_mlir.set_bundle(None)
        with pytest.raises(qb.BundleError, match="QUACK_MLIR_QUACKC"):
            _kernels.get_source()
        # The JIT alone.
        monkeypatch.setenv("QUACK_MLIR_JIT", "1")
        quack_mlir.set_bundle(None)
        source = _kernels.get_source()
        assert source.bundle is None
        assert source.candidates("rmsnorm_fwd", RMS)[0].alignment == 16
    finally:
        quack_mlir.set_bundle(None)

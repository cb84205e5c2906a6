"""A tuning target's bundle (quackc --bundle --tuning=h100): its variants
serve the devices its index names, before the architecture's variants of
the same alignment, and no other device. Needs neither torch nor a GPU."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))
from quack_mlir import bundle as qb  # noqa: E402
from quack_mlir import _kernels  # noqa: E402

KEY = {"T": "bf16", "N": 1024, "IGNORE": "true"}


def entry(alignment, tag):
    return {"kernel": "cross_entropy_fwd", "bindings": KEY,
            "alignment": alignment, "metadata": f"{tag}_a{alignment}.json"}


def index(alignments, tag, tuning=None):
    idx = {"schema": 1, "arch": "sm_90", "compiler": "0.1.0",
           "kernels": [entry(a, tag) for a in alignments]}
    if tuning:
        idx["tuning"], idx["tuning_device"] = tuning
    return idx


@pytest.fixture
def root(tmp_path):
    for name, idx in (("cross_entropy", index([16, 8, 4, 2], "arch")),
                      ("cross_entropy-h100",
                       index([16, 8], "h100", ("h100", "H100")))):
        d = tmp_path / name
        d.mkdir()
        (d / "index.json").write_text(json.dumps(idx))
    return tmp_path


def tags(variants):
    return [(v.alignment, os.path.basename(v.directory)) for v in variants]


def test_target_variants_serve_their_devices_first(root):
    s = qb.BundleSet(str(root))
    h100 = "NVIDIA H100 80GB HBM3"
    assert tags(s.candidates("cross_entropy_fwd", KEY, device=h100)) == [
        (16, "cross_entropy-h100"), (16, "cross_entropy"),
        (8, "cross_entropy-h100"), (8, "cross_entropy"),
        (4, "cross_entropy"), (2, "cross_entropy")]
    v = s.find("cross_entropy_fwd", KEY, 256, device=h100)
    assert os.path.basename(v.directory) == "cross_entropy-h100"
    # Where the target has no variant of that alignment, the architecture's.
    v = s.find("cross_entropy_fwd", KEY, 4, device=h100)
    assert (v.alignment, os.path.basename(v.directory)) == (
        4, "cross_entropy")


@pytest.mark.parametrize("device", [None, "NVIDIA H200", "NVIDIA H20"])
def test_other_devices_get_the_architecture_variants(root, device):
    s = qb.BundleSet(str(root))
    assert tags(s.candidates("cross_entropy_fwd", KEY, device=device)) == [
        (16, "cross_entropy"), (8, "cross_entropy"), (4, "cross_entropy"),
        (2, "cross_entropy")]


def test_a_target_bundle_alone_serves_no_other_device(root):
    s = qb.BundleSet(str(root / "cross_entropy-h100"))
    assert s.bundles[0].tuning == "h100"
    with pytest.raises(qb.KernelNotFoundError) as e:
        s.candidates("cross_entropy_fwd", KEY, device="NVIDIA H200")
    assert "serve only devices whose name contains 'H100'" in str(e.value)
    assert len(s.candidates("cross_entropy_fwd", KEY,
                            device="NVIDIA H100 PCIe")) == 2


@pytest.mark.parametrize("bad, words", [
    ({"tuning": "h100"}, '"tuning" and "tuning_device" come together'),
    ({"tuning_device": "H100"}, '"tuning" and "tuning_device" come together'),
    ({"tuning": "h100", "tuning_device": ""}, '"tuning_device" must be a'),
    ({"tuning": 7, "tuning_device": "H100"}, '"tuning" must be a'),
])
def test_malformed_tuning_index(tmp_path, bad, words):
    idx = index([16], "x")
    idx.update(bad)
    with pytest.raises(qb.BundleError) as e:
        qb.Bundle.from_index(idx, tmp_path)
    assert words in str(e.value)


def test_device_name_from_the_environment(monkeypatch):
    monkeypatch.setenv("QUACK_MLIR_DEVICE_NAME", "NVIDIA H100 80GB HBM3")
    assert _kernels.current_device_name() == "NVIDIA H100 80GB HBM3"
    # Empty: no device named, the architecture's variants only.
    monkeypatch.setenv("QUACK_MLIR_DEVICE_NAME", "")
    assert _kernels.current_device_name() is None


class _Loaded:
    """What _launch needs of a loaded kernel: its parameters."""
    params = []


def test_launcher_takes_the_current_device_name(root, monkeypatch):
    # The name reaches the variant choice of an op's launcher (the kernel
    # itself is not loaded: no runtime library or GPU is needed).
    from quack_mlir import _launch, _runtime
    monkeypatch.setattr(_kernels, "load_variant", lambda v: _Loaded())
    monkeypatch.setattr(_runtime, "raw_launch_function", lambda: None)
    monkeypatch.setenv("QUACK_MLIR_JIT", "0")
    _kernels.set_bundle(str(root))
    try:
        for name, first in (("NVIDIA H100 80GB HBM3", "cross_entropy-h100"),
                            ("NVIDIA H200", "cross_entropy"),
                            ("", "cross_entropy")):
            monkeypatch.setenv("QUACK_MLIR_DEVICE_NAME", name)
            lau = _launch.Launcher("cross_entropy_fwd", ("T", "N"),
                                   fixed={"IGNORE": "true"})
            fam = lau.family(("bf16", 1024))
            assert os.path.basename(fam.candidates[0].directory) == first
            assert fam.device == (name or None)
    finally:
        _kernels.set_bundle(None)

"""Ahead-of-time kernel bundles (docs/abi.md, "Bundle directory").

A bundle directory holds one .cubin and one .json per variant and an
index.json listing them (`quackc KERNEL.qk --bundle=DIR`). Kernels are found
through a *bundle path*: one or more entries separated by os.pathsep, each
either a bundle directory (it has an index.json) or a bundle root (a
directory whose immediate subdirectories are bundle directories, e.g. one
per .qk file). `BundleSet` reads them all and chooses among their variants.
This module needs neither torch nor the runtime library.

A bundle compiled for a tuning target (`quackc --bundle --tuning=h100`)
names it in its index ("tuning") with the devices it serves
("tuning_device": a text their name contains, e.g. "H100"). Its variants
are chosen only for such a device, before the architecture's variants of
the same alignment; for any other device, and where no device is named,
they are not used.
"""

import json
import os

__all__ = ["BundleError", "KernelNotFoundError", "Variant", "Bundle",
           "BundleSet", "find_bundle_dirs", "alignment_of"]


class BundleError(RuntimeError):
    """The bundle directory or its index.json is missing or malformed."""


class KernelNotFoundError(LookupError):
    """No variant of the bundle serves the requested bindings/alignment."""


def _binding_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _format_bindings(bindings):
    return ", ".join(f"{k}={_binding_text(v)}" for k, v in
                     sorted(bindings.items()))


def alignment_of(*values, cap=256):
    """Largest power of two (at most `cap`) dividing every value given.

    Zero divides by anything, so it does not limit the result.
    """
    align = cap
    for v in values:
        v = int(v)
        if v:
            low = v & -v
            if low < align:
                align = low
    return align


class Variant:
    """One entry of index.json."""

    __slots__ = ("kernel", "bindings", "alignment", "metadata", "directory",
                 "tuning_device")

    def __init__(self, kernel, bindings, alignment, metadata, directory="",
                 tuning_device=None):
        self.kernel = kernel
        self.bindings = bindings
        self.alignment = alignment
        self.metadata = metadata
        # The bundle directory holding the metadata file.
        self.directory = directory
        # A tuning target's variant: the text the names of the devices it
        # serves contain; None for the architecture's variants.
        self.tuning_device = tuning_device

    def serves(self, device):
        """Whether the variant may run for a device of this name (None: no
        device named, so the architecture's variants only)."""
        return self.tuning_device is None or (
            device is not None and self.tuning_device in device)

    @property
    def metadata_path(self):
        return os.path.join(self.directory, self.metadata)

    def matches(self, kernel, bindings):
        if self.kernel != kernel or len(self.bindings) != len(bindings):
            return False
        return all(k in self.bindings and self.bindings[k] == _binding_text(v)
                   for k, v in bindings.items())

    def __repr__(self):
        return (f"Variant({self.kernel!r}, {{{_format_bindings(self.bindings)}}}, "
                f"alignment={self.alignment})")


class Bundle:
    """A parsed bundle directory."""

    def __init__(self, path):
        self.path = os.path.abspath(os.fspath(path))
        index_path = os.path.join(self.path, "index.json")
        if not os.path.isdir(self.path):
            raise BundleError(f"kernel bundle directory {self.path} does not "
                              "exist")
        try:
            with open(index_path, "r", encoding="utf-8") as f:
                index = json.load(f)
        except FileNotFoundError:
            raise BundleError(f"{index_path} not found: not a kernel bundle "
                              "(quackc --bundle writes it)") from None
        except (OSError, ValueError) as e:
            raise BundleError(f"cannot read {index_path}: {e}") from None
        self.variants = self._parse(index, index_path, self.path)
        self.arch = index.get("arch")
        self.tuning = index.get("tuning")

    @staticmethod
    def _parse(index, where, directory):
        if not isinstance(index, dict):
            raise BundleError(f"{where}: the index must be a JSON object")
        if index.get("schema") != 1:
            raise BundleError(f"{where}: unsupported schema "
                              f"{index.get('schema')!r} (expected 1)")
        tuning = index.get("tuning")
        device = index.get("tuning_device")
        if (tuning is None) != (device is None):
            raise BundleError(f"{where}: \"tuning\" and \"tuning_device\" "
                              "come together (a tuning target's bundle)")
        for key, value in (("tuning", tuning), ("tuning_device", device)):
            if value is not None and (not isinstance(value, str) or
                                      not value):
                raise BundleError(f"{where}: \"{key}\" must be a non-empty "
                                  f"string, got {value!r}")
        kernels = index.get("kernels")
        if not isinstance(kernels, list):
            raise BundleError(f"{where}: \"kernels\" must be a list")
        variants = []
        for i, entry in enumerate(kernels):
            ctx = f"{where}: kernels[{i}]"
            if not isinstance(entry, dict):
                raise BundleError(f"{ctx} must be an object")
            kernel = entry.get("kernel")
            bindings = entry.get("bindings", {})
            alignment = entry.get("alignment")
            metadata = entry.get("metadata")
            if not isinstance(kernel, str) or not kernel:
                raise BundleError(f"{ctx}: \"kernel\" must be a string")
            if not isinstance(bindings, dict):
                raise BundleError(f"{ctx}: \"bindings\" must be an object")
            if (not isinstance(alignment, int) or isinstance(alignment, bool)
                    or alignment < 1 or alignment & (alignment - 1)):
                raise BundleError(f"{ctx}: \"alignment\" must be a positive "
                                  f"power of two, got {alignment!r}")
            if (not isinstance(metadata, str) or not metadata
                    or os.path.isabs(metadata)):
                raise BundleError(f"{ctx}: \"metadata\" must be a relative "
                                  "file name")
            variants.append(Variant(
                kernel, {k: _binding_text(v) for k, v in bindings.items()},
                alignment, metadata, directory, device))
        return variants

    @classmethod
    def from_index(cls, index, path):
        """Builds a bundle from an already parsed index (for tests)."""
        self = cls.__new__(cls)
        self.path = os.path.abspath(os.fspath(path))
        self.variants = cls._parse(index, os.path.join(self.path,
                                                       "index.json"),
                                   self.path)
        self.arch = index.get("arch")
        self.tuning = index.get("tuning")
        return self

    def find(self, kernel, bindings, alignment, device=None):
        """Returns the variant of `kernel` with exactly these bindings whose
        alignment divides `alignment` (the actual pointers' and strides'),
        taking the largest such alignment (a tuning target's variant for
        `device`, a device name, before the architecture's).
        """
        return _find(self.variants, self.path, kernel, bindings, alignment,
                     device)

    def candidates(self, kernel, bindings, device=None):
        """The variants of `kernel` with exactly these bindings that serve
        `device`, largest alignment first (among equal alignments, a tuning
        target's first); raises KernelNotFoundError when there is none."""
        return _candidates(self.variants, self.path, kernel, bindings,
                           device=device)

    def metadata_path(self, variant):
        return variant.metadata_path


def _candidates(variants, where, kernel, bindings, alignment=None,
                device=None):
    matching = [v for v in variants
                if v.matches(kernel, bindings) and v.serves(device)]
    if not matching:
        elsewhere = sorted({v.tuning_device for v in variants
                            if v.matches(kernel, bindings)})
        if elsewhere:
            raise KernelNotFoundError(
                f"no kernel for {kernel} ({_format_bindings(bindings)}) in "
                f"bundle {where} for device {device!r}: its variants with "
                "these bindings serve only devices whose name contains " +
                ", ".join(repr(d) for d in elsewhere) + " (a tuning target's "
                "bundle; add the architecture's bundle to the path)")
        what = _format_bindings(bindings)
        if alignment is not None:
            what += f", alignment {alignment}"
        others = sorted({_format_bindings(v.bindings) for v in variants
                         if v.kernel == kernel})
        hint = ("; it has " + "; ".join(others[:12]) +
                (" ..." if len(others) > 12 else "")) if others else (
                    f"; it has no {kernel} kernels at all")
        raise KernelNotFoundError(
            f"no kernel for {kernel} ({what}) in bundle {where}{hint}")
    # Stable: among equal alignments a tuning target's variant, then the
    # earlier bundle (and entry) wins.
    return sorted(matching, key=lambda v: (-v.alignment,
                                           v.tuning_device is None))


def _find(variants, where, kernel, bindings, alignment, device=None):
    matching = _candidates(variants, where, kernel, bindings, alignment,
                           device)
    for v in matching:
        if alignment % v.alignment == 0:
            return v
    have = sorted({v.alignment for v in matching})
    raise KernelNotFoundError(
        f"no kernel for {kernel} ({_format_bindings(bindings)}, alignment "
        f"{alignment}) in bundle {where}: the variants with these bindings "
        f"need alignment {have} bytes, but the tensors' pointers and row "
        f"strides are only {alignment}-byte aligned")


def find_bundle_dirs(spec):
    """The bundle directories named by `spec`: a path, a list of paths, or
    paths separated by os.pathsep. Each path is a bundle directory (it holds
    index.json; its bundle subdirectories are taken too) or a bundle root
    (its immediate subdirectories holding index.json are taken, in name
    order). Raises BundleError for a path that is neither."""
    if isinstance(spec, (str, bytes, os.PathLike)):
        spec = os.fspath(spec)
        if isinstance(spec, bytes):
            spec = os.fsdecode(spec)
        entries = [p for p in spec.split(os.pathsep) if p]
    else:
        entries = [os.fspath(p) for p in spec]
    if not entries:
        raise BundleError("empty kernel bundle path")
    dirs = []
    for entry in entries:
        path = os.path.abspath(entry)
        if not os.path.isdir(path):
            raise BundleError(f"kernel bundle directory {path} does not "
                              "exist")
        found = []
        if os.path.isfile(os.path.join(path, "index.json")):
            found.append(path)
        try:
            names = sorted(os.listdir(path))
        except OSError as e:
            raise BundleError(f"cannot list {path}: {e}") from None
        for name in names:
            sub = os.path.join(path, name)
            if os.path.isfile(os.path.join(sub, "index.json")):
                found.append(sub)
        if not found:
            raise BundleError(
                f"{os.path.join(path, 'index.json')} not found: {path} is "
                "neither a kernel bundle (quackc --bundle writes index.json) "
                "nor a bundle root (a directory of bundle directories)")
        for d in found:
            if d not in dirs:
                dirs.append(d)
    return dirs


class BundleSet:
    """Several bundles searched as one: a variant is chosen among all of
    them (the largest usable alignment; on a tie, the earlier bundle)."""

    def __init__(self, spec):
        self.bundles = [Bundle(d) for d in find_bundle_dirs(spec)]
        self._init()

    @classmethod
    def of(cls, bundles):
        self = cls.__new__(cls)
        self.bundles = list(bundles)
        self._init()
        return self

    def _init(self):
        self.paths = [b.path for b in self.bundles]
        # One bundle: its own path; several: the paths joined as given.
        self.path = os.pathsep.join(self.paths)
        self.variants = [v for b in self.bundles for v in b.variants]
        self.arch = next((b.arch for b in self.bundles if b.arch), None)

    def find(self, kernel, bindings, alignment, device=None):
        """As Bundle.find, over every bundle of the set."""
        return _find(self.variants, self.path, kernel, bindings, alignment,
                     device)

    def candidates(self, kernel, bindings, device=None):
        """As Bundle.candidates, over every bundle of the set."""
        return _candidates(self.variants, self.path, kernel, bindings,
                           device=device)

    def metadata_path(self, variant):
        return variant.metadata_path

    def __repr__(self):
        return f"BundleSet({self.paths!r}, {len(self.variants)} variants)"

"""Ahead-of-time kernel bundles (docs/abi.md, "Bundle directory").

A bundle directory holds one .cubin and one .json per variant and an
index.json listing them. This module reads the index and chooses a variant;
it needs neither torch nor the runtime library.
"""

import json
import os

__all__ = ["BundleError", "KernelNotFoundError", "Variant", "Bundle",
           "alignment_of"]


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

    __slots__ = ("kernel", "bindings", "alignment", "metadata")

    def __init__(self, kernel, bindings, alignment, metadata):
        self.kernel = kernel
        self.bindings = bindings
        self.alignment = alignment
        self.metadata = metadata

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
        self.variants = self._parse(index, index_path)
        self.arch = index.get("arch")

    @staticmethod
    def _parse(index, where):
        if not isinstance(index, dict):
            raise BundleError(f"{where}: the index must be a JSON object")
        if index.get("schema") != 1:
            raise BundleError(f"{where}: unsupported schema "
                              f"{index.get('schema')!r} (expected 1)")
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
                alignment, metadata))
        return variants

    @classmethod
    def from_index(cls, index, path):
        """Builds a bundle from an already parsed index (for tests)."""
        self = cls.__new__(cls)
        self.path = os.path.abspath(os.fspath(path))
        self.variants = cls._parse(index, os.path.join(self.path,
                                                       "index.json"))
        self.arch = index.get("arch")
        return self

    def find(self, kernel, bindings, alignment):
        """Returns the variant of `kernel` with exactly these bindings whose
        alignment divides `alignment` (the actual pointers' and strides'),
        taking the largest such alignment.
        """
        matching = [v for v in self.variants if v.matches(kernel, bindings)]
        usable = [v for v in matching if alignment % v.alignment == 0]
        if usable:
            return max(usable, key=lambda v: v.alignment)
        what = f"{kernel} ({_format_bindings(bindings)}, alignment {alignment})"
        if matching:
            have = sorted({v.alignment for v in matching})
            raise KernelNotFoundError(
                f"no kernel for {what} in bundle {self.path}: the variants "
                f"with these bindings need alignment {have} bytes, but the "
                f"tensors' pointers and row strides are only {alignment}-byte "
                "aligned")
        others = sorted({_format_bindings(v.bindings) for v in self.variants
                         if v.kernel == kernel})
        hint = ("; it has " + "; ".join(others[:12]) +
                (" ..." if len(others) > 12 else "")) if others else (
                    f"; it has no {kernel} kernels at all")
        raise KernelNotFoundError(f"no kernel for {what} in bundle "
                                  f"{self.path}{hint}")

    def metadata_path(self, variant):
        return os.path.join(self.path, variant.metadata)

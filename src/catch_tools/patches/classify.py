# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Classify a path of the PyTorch source tree by what a wheel overlay can do with a change to it.

* ``python``: shipped as-is in the ``torch`` wheel (``torch/``, ``torchgen/``, ``functorch/`` Python files and data);
  a patch to it can be applied to an unpacked wheel.
* ``native``: compiled or code-generated at build time (C/C++/CUDA/ObjC/assembly sources and headers, CMake,
  ``setup.py``, Bazel/Buck files, the YAML codegen inputs such as ``aten/src/ATen/native/native_functions.yaml`` and
  ``tools/autograd/derivatives.yaml``, ``*.pyi.in`` stub templates, and everything under ``aten/ c10/ caffe2/
  torch/csrc/ third_party/ cmake/ tools/``); it needs a source build.
* ``unshipped``: not in the wheel (``test/``, ``docs/``, ``.github/``, ``benchmarks/``, top-level files, ...).

The shipped package list follows PyTorch's ``setup.py`` (``packages=["torch", "torchgen", "functorch", ...]``).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from catch_tools.patches.model import PathClass

SHIPPED_PACKAGES = ("torch", "torchgen", "functorch")
NATIVE_SUFFIXES = frozenset({
    ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".m", ".mm", ".metal", ".s", ".S",
    ".asm", ".cmake", ".bzl", ".bazel", ".buck", ".in", ".ld", ".def", ".inc", ".cl", ".hip", ".ptx", ".spv",
})
NATIVE_NAMES = frozenset({
    "CMakeLists.txt", "setup.py", "BUILD", "BUILD.bazel", "WORKSPACE", "BUCK", "Makefile", "build.ninja",
    "pyproject.toml", "setup.cfg", "MANIFEST.in",
})
NATIVE_DIRS = ("aten/", "c10/", "caffe2/", "torch/csrc/", "third_party/", "cmake/", "tools/", "android/", "ios/",
               "binaries/", "modules/", "torch/lib/", "torch/include/")
CODEGEN_SUFFIXES = frozenset({".yaml", ".yml"})


def classify_path(path: str) -> PathClass:
    """Return ``"python"``, ``"native"`` or ``"unshipped"`` for a tree-relative POSIX path (see module doc)."""
    pure = PurePosixPath(path)
    top = pure.parts[0] if pure.parts else ""
    if pure.name in NATIVE_NAMES or pure.suffix in NATIVE_SUFFIXES or path.startswith(NATIVE_DIRS):
        # A native name inside a shipped package still needs a build (e.g. torch/_inductor's C++ headers are
        # copied by the build), and tools/ holds the code generators.
        return "native"
    if pure.suffix in CODEGEN_SUFFIXES and top in (*SHIPPED_PACKAGES, "aten", "tools"):
        return "native"
    if top in SHIPPED_PACKAGES and len(pure.parts) > 1:
        return "python"
    return "unshipped"

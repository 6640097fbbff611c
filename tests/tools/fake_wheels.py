# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Test fixture (not shipped in the package): write a small wheel from in-memory files (correct dist-info and
RECORD), with :mod:`zipfile`.

Used for the pure-Python stand-in of the Catch backend (benchmarks, tests, a quick combined build without the native
compile) and for small synthetic upstream wheels in tests. Deterministic: fixed timestamp, sorted members.
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path

from catch_tools.wheel.record import RecordRow, format_record, record_digest

_STAMP = (2020, 1, 1, 0, 0, 0)


def write_wheel(
    out_dir: Path,
    name: str,
    version: str,
    files: Mapping[str, bytes | str],
    *,
    tag: str = "py3-none-any",
    requires: tuple[str, ...] = (),
    entry_points: str = "",
    extra_metadata: Mapping[str, bytes | str] | None = None,
    modes: Mapping[str, int] | None = None,
) -> Path:
    """Write ``{name}-{version}-{tag}.whl`` into ``out_dir`` and return its path.

    ``files`` maps archive paths to contents; ``extra_metadata`` adds or overrides ``.dist-info`` files (relative
    names); ``modes`` gives Unix modes (default 0644). RECORD is computed (rows sorted, its own row empty).
    """
    dist_info = f"{name}-{version}.dist-info"
    meta: dict[str, bytes | str] = {
        "METADATA": "Metadata-Version: 2.1\nName: {}\nVersion: {}\n{}\n".format(
            name, version, "".join(f"Requires-Dist: {r}\n" for r in requires)),
        "WHEEL": f"Wheel-Version: 1.0\nGenerator: catch-tools\nRoot-Is-Purelib: false\nTag: {tag}\n\n",
    }
    if entry_points:
        meta["entry_points.txt"] = entry_points
    meta.update(extra_metadata or {})
    members: dict[str, bytes] = {}
    for path, data in sorted(files.items()):
        members[path] = data.encode("utf-8") if isinstance(data, str) else data
    for rel, text in sorted(meta.items()):
        members[f"{dist_info}/{rel}"] = text.encode("utf-8") if isinstance(text, str) else text
    rows = [RecordRow(p, record_digest(d), len(d)) for p, d in members.items()]
    rows.append(RecordRow(f"{dist_info}/RECORD", "", None))
    members[f"{dist_info}/RECORD"] = format_record(rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for member, payload in members.items():
            info = zipfile.ZipInfo(member, _STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100000 | (modes or {}).get(member, 0o644)) << 16
            zf.writestr(info, payload)
    return wheel


def fake_backend_wheel(out_dir: Path, version: str = "0.1.0", tag: str = "py3-none-any") -> Path:
    """A pure-Python ``torch_mlu`` wheel with the ``[torch.backends] mlu = torch_mlu:_autoload`` entry point.

    Its ``_autoload`` does what the real backend's does at the Python level that needs no native code: nothing
    beyond importing. Stands in for the real backend where its native build is not wanted (tests, benchmarks).
    """
    init = (
        '"""Stand-in for the Catch backend (pure Python, no device)."""\n'
        "__version__ = '" + version + "'\n\n\n"
        "def _autoload() -> None:\n"
        '    """Entry point of group torch.backends, called by ``import torch``."""\n'
    )
    return write_wheel(out_dir, "torch_mlu", version, {"torch_mlu/__init__.py": init}, tag=tag,
                       requires=("torch==2.13.0",), entry_points="[torch.backends]\nmlu = torch_mlu:_autoload\n")


FAKE_TORCH_TAG = "cp311-cp311-manylinux_2_28_x86_64"


def fake_torch_wheel(out_dir: Path, wheel_version: str, commit: str,
                     extra: Mapping[str, bytes | str] | None = None) -> Path:
    """A small pure-Python stand-in for the upstream torch wheel with the real one's shape.

    Has ``torch/version.py`` (``__version__``, ``git_version`` = ``commit``), ``torch/_C.py`` exposing
    ``_GLIBCXX_USE_CXX11_ABI``, ``torch.compiled_with_cxx11_abi()``, a public module ``torch/utils/helpers.py``, a
    header under ``torch/include`` and a CMake file under ``torch/share/cmake``, the real wheel's dist-info files
    (METADATA with Requires-Dist, WHEEL tag, entry_points.txt, top_level.txt). ``extra`` adds files (e.g. a
    ``torch/lib/*.so``).
    """
    files: dict[str, bytes | str] = {
        "torch/__init__.py": (
            '"""Stand-in torch."""\nfrom torch import _C\nfrom torch.version import __version__\n\n\n'
            "def compiled_with_cxx11_abi() -> bool:\n    return bool(_C._GLIBCXX_USE_CXX11_ABI)\n\n\n"
            "def add(a, b, *, alpha=1):\n    return a + alpha * b\n"
        ),
        "torch/_C.py": "_GLIBCXX_USE_CXX11_ABI = True\n",
        "torch/version.py": (
            "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version']\n"
            f"__version__ = '{wheel_version}'\ndebug = False\ncuda: Optional[str] = None\n"
            f"git_version = '{commit}'\n"
        ),
        "torch/utils/__init__.py": "",
        "torch/utils/helpers.py": (
            "def scale(x, factor=2):\n    return x * factor\n\n\n"
            "def shift(x, by):\n    return x + by\n"
        ),
        "torch/include/ATen/Fake.h": "#pragma once\nnamespace at { int fake(int x); }\n",
        "torch/share/cmake/Torch/TorchConfig.cmake": "set(TORCH_FOUND TRUE)\n",
        "torchgen/__init__.py": "",
    }
    files.update(extra or {})
    modes = {name: 0o755 for name in files if name.endswith(".so")}
    eps = "[console_scripts]\ntorchrun = torch.distributed.run:main\n\n"
    return write_wheel(out_dir, "torch", wheel_version, files, tag=FAKE_TORCH_TAG,
                       requires=("filelock", "typing-extensions>=4.10.0", "sympy>=1.13.3"), entry_points=eps,
                       extra_metadata={"top_level.txt": "functorch\ntorch\ntorchgen\n"}, modes=modes)

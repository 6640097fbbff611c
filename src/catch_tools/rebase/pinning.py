# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""What the pin becomes after a rebase, and writing it everywhere it is stated (manifest, ``constraints.txt`` and the
``pytorch`` gitlink).

The pin's ``commit`` is the upstream PyTorch commit of the release (``torch.version.git_version`` of its wheel). In a
full clone of PyTorch that is the commit ``--onto`` names. In the repository built from release wheels
(:mod:`catch_tools.upstream`) each release commit states it in its message (``upstream commit <40 hex>``) and in the
tree's ``torch/version.py`` (``git_version = '<40 hex>'``); those win over the local commit id.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from catch_tools.errors import UserError
from catch_tools.git import Repo, run_git
from catch_tools.pin import Pin, gitlink_commit, load_pin, manifest_path, update_pin

_MSG_COMMIT = re.compile(r"upstream commit ([0-9a-f]{40})")
_GIT_VERSION = re.compile(r"""^git_version\s*=\s*['"]([0-9a-f]{40})['"]""", re.MULTILINE)
_VERSION_PY = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)


@dataclass(frozen=True)
class PinTarget:
    """The pin values for one upstream commit: tag, upstream commit id, upstream wheel version (PEP 440)."""

    tag: str
    commit: str
    wheel_version: str


def load_project_pin(root: Path) -> Pin:
    """The pin of the project ``root`` (:func:`catch_tools.pin.load_pin` of ``<root>/patches/manifest.toml``), with
    the advice for a missing manifest in ``rebase.py``'s own options (``--project``).

    Raises:
        UserError: as :func:`~catch_tools.pin.load_pin`.
    """
    path = manifest_path(root)
    if not os.path.lexists(path):
        raise UserError("pin manifest not found: pass --project DIR, the Catch checkout holding "
                        "patches/manifest.toml", path=path)
    return load_pin(path)


def pin_target(repo: Repo, ref: str, commit: str) -> PinTarget:
    """Pin values for ``ref`` (resolved to ``commit``) in ``repo``; see the module docstring for the commit id rule.

    The tag is ``ref`` when it is a tag, else the tag pointing exactly at ``commit``, else ``ref`` itself. The wheel
    version is ``<release>+cpu`` (the CPU wheel the overlay build starts from), the release read from the tag
    (``v2.14.0`` -> ``2.14.0``), else from ``torch/version.py`` or ``version.txt`` in the tree.
    """
    tag = ref if repo.run("rev-parse", "--verify", "--quiet", f"refs/tags/{ref}", check=False).ok else None
    if tag is None:
        described = repo.run("describe", "--tags", "--exact-match", commit, check=False)
        tag = described.stdout.strip() if described.ok else ref
    message = repo.out("log", "-1", "--format=%B", commit)
    version_py = repo.run("show", f"{commit}:torch/version.py", check=False).stdout
    match = _MSG_COMMIT.search(message) or _GIT_VERSION.search(version_py)
    upstream = match.group(1) if match else commit
    release = _release(tag) or _release(_first(_VERSION_PY, version_py))
    if release is None:
        release = _release(repo.run("show", f"{commit}:version.txt", check=False).stdout.strip())
    if release is None:
        raise UserError(f"cannot tell which PyTorch release {ref} is (no vX.Y.Z tag, torch/version.py or version.txt)")
    return PinTarget(tag=tag, commit=upstream, wheel_version=f"{release}+cpu")


def _first(pattern: re.Pattern[str], text: str) -> str:
    match = pattern.search(text)
    return match.group(1) if match else ""


def _release(text: str) -> str | None:
    try:
        return Version(text.removeprefix("v")).base_version if text else None
    except InvalidVersion:
        return None


_TORCH_REQUIREMENT = re.compile(r"^torch\s*==\s*[^\s#;]+", re.MULTILINE)


def constraints_path(root: Path) -> Path:
    """The project's pip constraints file (``PIP_CONSTRAINT`` of tox, CI and the images): ``<root>/constraints.txt``."""
    return root / "constraints.txt"


def write_pin(root: Path, target: PinTarget) -> None:
    """Write ``target`` everywhere the pin is stated as a value: ``patches/manifest.toml`` (comments kept,
    :func:`catch_tools.pin.update_pin`) and the ``torch==<release>`` line of ``constraints.txt`` when the project has
    one (the public release of ``target.wheel_version``: a local label such as ``+cpu`` is not allowed in a
    constraint's ``==``, PEP 440 "Version matching").
    """
    update_pin(manifest_path(root), tag=target.tag, commit=target.commit, wheel_version=target.wheel_version)
    constraints = constraints_path(root)
    if constraints.is_file():
        # surrogateescape: bytes that are not UTF-8 elsewhere in the file are written back as they were
        text = constraints.read_text(encoding="utf-8", errors="surrogateescape")
        release = Version(target.wheel_version).public
        updated = _TORCH_REQUIREMENT.sub(f"torch=={release}", text)
        if updated != text:
            constraints.write_text(updated, encoding="utf-8", errors="surrogateescape")


def project_gitlink(root: Path) -> str | None:
    """The ``pytorch`` gitlink commit in the project's index, or None (:func:`catch_tools.pin.gitlink_commit`)."""
    return gitlink_commit(root)


def set_gitlink(root: Path, commit: str, submodule: str = "pytorch") -> None:
    """Point the project's ``pytorch`` gitlink at ``commit`` in the index (``git update-index --cacheinfo``).

    Only the index entry changes (the submodule need not be cloned); the maintainer commits it with the new series.
    """
    run_git(root, "update-index", "--cacheinfo", f"160000,{commit},{submodule}")

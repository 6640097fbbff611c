# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Where the project's pieces live, relative to the repository root.

The root is found from this file's location (a source checkout, editable or not) or from ``CATCH_ROOT``.
"""

from __future__ import annotations

import os
from pathlib import Path

from catch_tools.git import listed_files
from catch_tools.userfiles import output_dir

#: Path parts that are never sources: build outputs, caches, the version file the build generates.
NOT_SOURCES = frozenset({"build", "__pycache__", "_version.py", ".git"})


def repo_root() -> Path:
    """Return the Catch repository root (the directory holding ``patches/manifest.toml``).

    Raises:
        FileNotFoundError: when neither ``CATCH_ROOT`` nor the parents of this file hold ``patches/manifest.toml``.
    """
    env = os.environ.get("CATCH_ROOT")
    candidates = [Path(env)] if env else list(Path(__file__).resolve().parents)
    for cand in candidates:
        if (cand / "patches" / "manifest.toml").is_file():
            return cand
    raise FileNotFoundError("cannot find the Catch repository root (set CATCH_ROOT)")


def patches_dir() -> Path:
    """``<root>/patches``: the series file, the patches and the pin manifest."""
    return repo_root() / "patches"


def pytorch_dir() -> Path:
    """``<root>/pytorch``: the upstream PyTorch submodule (may be empty where GitHub is unreachable)."""
    return repo_root() / "pytorch"


def cache_dir() -> Path:
    """Download and build cache outside the repository: ``$CATCH_CACHE`` or ``~/.cache/catch`` (created if missing).

    Raises:
        UserError: the path, or one of its parents, exists and is not a directory, or it cannot be created (one line
            naming it and ``CATCH_CACHE``; see :func:`catch_tools.userfiles.output_dir`).
    """
    env = os.environ.get("CATCH_CACHE")
    option = "CATCH_CACHE" if env else "the cache directory ~/.cache/catch (or set CATCH_CACHE)"
    return output_dir(Path(env) if env else Path.home() / ".cache" / "catch", option)


def source_files(root: Path) -> list[Path]:
    """The source files under ``root``, sorted: the files git lists there (tracked and untracked-not-ignored,
    :func:`catch_tools.git.listed_files`) or, outside a git work tree, every file; either way without build outputs
    and caches (a path part in :data:`NOT_SOURCES` or ending in ``.egg-info``) and without listed files that are
    gone from the work tree. What the backend cache (:func:`catch_tools.wheel.sources.backend_digest`) and the
    upgrade's state (:func:`catch_tools.upgrade.state.sources_hash`) hash."""
    listed = listed_files(root)
    found = [root / rel for rel in listed] if listed is not None else [p for p in root.rglob("*")]
    return sorted(path for path in found if path.is_file() and not _built(path.relative_to(root).parts))


def _built(parts: tuple[str, ...]) -> bool:
    return any(part in NOT_SOURCES or part.endswith(".egg-info") for part in parts)

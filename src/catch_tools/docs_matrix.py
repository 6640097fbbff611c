# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The version matrix of the docs (Catch <-> PyTorch <-> Python <-> wheel tag), generated from the pin.

One row per pin: the working copy's ``patches/manifest.toml`` first, then every earlier pin found in the git
history of that file (``git log -- patches/manifest.toml``; skipped when the checkout has no git metadata). Columns:

- Catch release: the release tag ``v<upstream public version>-catch<series version>`` (``ci/README.md``: the release
  workflow runs on tags ``v<torch>-catch<N>``), the combined wheel's version (:attr:`catch_tools.pin.Pin.
  combined_version`, PEP 440 local label, so it satisfies ``torch==<public>``) and the ``torch_mlu`` version
  (``<public>+catch<N>``, the regex of ``catch/pyproject.toml``).
- PyTorch: the upstream tag, the commit (``torch.version.git_version`` of that release) and the upstream wheel version.
- Python and wheel tag: the combined wheel keeps the upstream wheel's tags unchanged
  (:func:`catch_tools.wheel.metadata.combined_filename`), so the tag is the upstream wheel's ``Tag:`` (the
  ``WHEEL`` file of the binary distribution format spec). It is read from the manifest's optional ``[wheel] tag``
  key, else from the installed ``torch`` distribution when its version equals the pin's ``wheel_version`` (the
  pinned wheel, which every Catch environment installs through ``constraints.txt``). The Python version is the
  CPython of the ``cpXY`` interpreter tag.

``catch versions`` (:mod:`catch_tools.cli.versions`) prints the table as Markdown (the docs build inserts the same
text).
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from catch_tools.errors import UserError
from catch_tools.git import try_git
from catch_tools.paths import repo_root
from catch_tools.pin import Pin, manifest_path, parse_pin

MANIFEST_REL = "patches/manifest.toml"
_CPYTHON_TAG = re.compile(r"^cp(\d)(\d+)$")


@dataclass(frozen=True)
class MatrixRow:
    """One Catch release line of the matrix (all strings, as printed)."""

    release_tag: str
    combined_version: str
    torch_mlu_version: str
    upstream_tag: str
    upstream_commit: str
    upstream_wheel_version: str
    python: str
    wheel_tag: str
    source: str

    def cells(self) -> list[str]:
        """The row as Markdown table cells, in :data:`HEADER` order."""
        return [f"`{self.release_tag}`", f"`{self.combined_version}`", f"`{self.torch_mlu_version}`",
                f"`{self.upstream_tag}` (`{self.upstream_commit[:12]}`)", f"`{self.upstream_wheel_version}`",
                self.python, f"`{self.wheel_tag}`", self.source]


HEADER = ["Catch release", "combined wheel `torch`", "`torch_mlu`", "PyTorch (commit)", "upstream wheel",
          "Python", "wheel tag", "pin"]


def python_of_tag(tag: str) -> str:
    """``cp311-cp311-manylinux_2_28_x86_64`` -> ``CPython 3.11`` (interpreter tag of PEP 425).

    Raises:
        UserError: the tag's interpreter part is not a CPython version tag.
    """
    interp = tag.split("-")[0]
    match = _CPYTHON_TAG.match(interp)
    if not match:
        raise UserError(f"wheel tag {tag!r} does not name a CPython version (expected cpXY-...)")
    return f"CPython {match.group(1)}.{match.group(2)}"


def installed_torch_tag(wheel_version: str) -> str | None:
    """The ``Tag:`` of the installed ``torch`` distribution's ``WHEEL`` file if its version is ``wheel_version``."""
    try:
        dist = importlib.metadata.distribution("torch")
    except importlib.metadata.PackageNotFoundError:
        return None
    if Version(dist.version) != Version(wheel_version):
        return None
    wheel = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
    return tags[0] if tags else None


def wheel_tag_for(manifest_text: str, pin: Pin, where: str) -> str:
    """The wheel tag of the release pinned by ``manifest_text``: ``[wheel] tag`` if present, else the installed torch's.

    Raises:
        UserError: neither source gives a tag (name the manifest and what to install).
    """
    data = tomllib.loads(manifest_text)
    tag = data.get("wheel", {}).get("tag")
    if isinstance(tag, str) and tag:
        return tag
    installed = installed_torch_tag(pin.wheel_version)
    if installed is None:
        raise UserError(f"no wheel tag for torch {pin.wheel_version}: install the pinned torch=={pin.public_version} "
                        "(constraints.txt) or add [wheel] tag = \"cpXY-cpXY-<platform>\"", path=where)
    return installed


def row_for(manifest_text: str, where: str, source: str, *, need_tag: bool) -> MatrixRow | None:
    """The matrix row of one manifest revision; ``None`` for an old revision whose tag cannot be known.

    Raises:
        UserError: an invalid manifest (see :func:`catch_tools.pin.parse_pin`), or no tag when ``need_tag``.
    """
    pin = parse_pin(manifest_text, where)
    try:
        tag = wheel_tag_for(manifest_text, pin, where)
    except UserError:
        if need_tag:
            raise
        return None
    public = pin.public_version
    return MatrixRow(
        release_tag=f"v{public}-catch{pin.series_version}",
        combined_version=pin.combined_version,
        torch_mlu_version=f"{public}+catch{pin.series_version}",
        upstream_tag=pin.tag,
        upstream_commit=pin.commit,
        upstream_wheel_version=pin.wheel_version,
        python=python_of_tag(tag),
        wheel_tag=tag,
        source=source,
    )


def manifest_history(root: Path) -> list[tuple[str, str]]:
    """``(short commit, manifest text)`` of every commit that changed the manifest, newest first ([] without git)."""
    proc = try_git(root, "log", "--format=%h", "--", MANIFEST_REL)
    if not proc.ok:
        return []
    out = []
    for commit in proc.stdout.split():
        show = try_git(root, "show", f"{commit}:{MANIFEST_REL}")
        if show.ok:
            out.append((commit, show.out.decode("utf-8", "replace")))
    return out


def matrix_rows(root: Path | None = None) -> list[MatrixRow]:
    """The rows, current pin first; an older pin appears once (its newest commit), and only when its tag is known.

    Raises:
        UserError: the current manifest is invalid or its wheel tag is unknown.
    """
    root = root or repo_root()
    path = manifest_path(root)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError("pin manifest not found", path=path) from None
    current = row_for(text, str(path), "working copy", need_tag=True)
    assert current is not None
    rows = [current]
    seen = {(current.upstream_commit, current.combined_version)}
    for commit, old_text in manifest_history(root):
        try:
            row = row_for(old_text, f"{commit}:{MANIFEST_REL}", f"commit `{commit}`", need_tag=False)
        except UserError:
            continue  # an early, invalid revision of the manifest is not a release
        if row is None or (row.upstream_commit, row.combined_version) in seen:
            continue
        seen.add((row.upstream_commit, row.combined_version))
        rows.append(row)
    return rows


def markdown_table(rows: Sequence[MatrixRow]) -> str:
    """The rows as a GitHub/MyST Markdown pipe table (ends with a newline)."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines) + "\n"

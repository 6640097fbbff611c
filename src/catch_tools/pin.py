# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The pin manifest ``patches/manifest.toml``: the one machine-readable statement of the upstream base.

Shape::

    [upstream]
    repository = "https://github.com/pytorch/pytorch.git"
    tag = "v2.13.0"                      # upstream release tag
    commit = "cf30153c..."               # 40 hex digits; equals torch.version.git_version of that release's wheel
    wheel_version = "2.13.0+cpu"         # PEP 440 version of the upstream wheel the overlay build starts from
    [series]
    version = 1                          # series counter: combined version is <wheel_version>.catch<version>

The ``pytorch`` gitlink (mode 160000 entry in the index) must name the same commit: :func:`gitlink_commit`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from catch_tools.errors import UserError, toml_error
from catch_tools.git import try_git
from catch_tools.paths import repo_root
from catch_tools.userfiles import read_utf8_file, write_atomic

MANIFEST_NAME = "manifest.toml"
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Pin:
    """The upstream base of the series and the series' own version."""

    repository: str
    tag: str
    commit: str
    wheel_version: str
    series_version: int

    @property
    def combined_version(self) -> str:
        """PEP 440 version of the combined wheel: ``2.13.0+cpu`` + series 1 -> ``2.13.0+cpu.catch1``.

        A local label satisfies ``==2.13.0`` and ``>=2.13`` (PEP 440, "Local version identifiers").
        """
        sep = "." if "+" in self.wheel_version else "+"
        return f"{self.wheel_version}{sep}catch{self.series_version}"

    @property
    def public_version(self) -> str:
        """The upstream release without local label, e.g. ``2.13.0``."""
        from packaging.version import Version  # imported here: a CLI that needs no version does not pay for it

        return Version(self.wheel_version).public


def manifest_path(root: Path | None = None) -> Path:
    """Path of the manifest under ``root`` (default: the repository root)."""
    return (root or repo_root()) / "patches" / MANIFEST_NAME


def load_pin(path: Path | None = None, *, option: str | None = None) -> Pin:
    """Read and validate the manifest.

    ``option`` is the calling tool's own way to name another manifest (``"--pin FILE"``, ``"--project DIR"``); a
    missing manifest's error advises it, and only it (None: the tool has none, the error advises a Catch checkout).

    Raises:
        UserError: missing file, not a regular file (a FIFO is never read), a byte that is not UTF-8 (with its line),
            TOML syntax error (with line), missing key, or a malformed commit/version.
    """
    path = path or manifest_path()
    return parse_pin(read_manifest(path, option=option), path)


def read_manifest(path: Path, *, option: str | None = None) -> str:
    """The text of the manifest ``path``, read as :func:`load_pin` reads it (``option`` as there).

    Raises:
        UserError: missing file, not a regular file, unreadable, or a byte that is not UTF-8 (with its line).
    """
    try:
        return read_utf8_file(path, "the pin manifest")
    except FileNotFoundError:
        advice = f"pass {option}, or run from" if option else "run from"
        raise UserError(f"pin manifest not found: {advice} a Catch checkout (patches/manifest.toml)",
                        path=path) from None
    except IsADirectoryError:
        raise UserError("is a directory, expected the pin manifest file (manifest.toml)", path=path) from None
    except OSError as err:
        raise UserError(f"cannot read the pin manifest: {err.strerror}", path=path) from None


def _key_line(text: str, section: str, key: str | None = None) -> int | None:
    """1-based line of ``key = ...`` inside ``[section]`` of the TOML ``text`` (of the ``[section]`` header when
    ``key`` is None); None when not found (tomllib reports no positions for valid TOML)."""
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = re.match(r"^\[\s*([A-Za-z0-9_.-]+)\s*\]", stripped)
        if header:
            current = header.group(1)
            if key is None and current == section:
                return number
            continue
        if key is not None and current == section and re.match(rf"^{re.escape(key)}\s*=", stripped):
            return number
        if key is None and re.match(rf"^{re.escape(section)}\s*=", stripped) and current is None:
            return number
    return None


def parse_pin(text: str, path: str | Path) -> Pin:
    """Validate manifest ``text`` (read from ``path``, named in errors) as :func:`load_pin` does; no file is read.

    Raises:
        UserError: the first of :func:`pin_problems` (TOML syntax error, missing table or key, a malformed value),
            one line naming ``path`` and, when the key is in the file, its line.
    """
    problems, pin = _check(text, path)
    if problems:
        raise problems[0]
    assert pin is not None
    return pin


def pin_problems(text: str, path: str | Path) -> list[UserError]:
    """Every problem of manifest ``text`` (read from ``path``) that :func:`parse_pin` refuses, in file order of the
    keys; empty when the manifest is valid. ``scripts/apply_patches.py lint`` reports them all, the loader the first.

    The rules, each problem one line naming ``path`` and, when the key is in the file, its line: valid TOML;
    ``[upstream]`` and ``[series]`` tables; ``repository``, ``tag``, ``commit``, ``wheel_version`` strings;
    ``repository`` not empty, without whitespace; ``tag`` a git tag name (``refs/tags/<tag>``: letters, digits and
    ``._+-``, not starting with ``-`` or ``.``, no ``..``, not ending in ``.`` or ``.lock``); ``commit`` 40 lowercase
    hex digits; ``wheel_version`` a PEP 440 version written in its normal form (``str(Version(v)) == v``,
    packaging's normalization: no surrounding whitespace or line break, ``2.13.0rc1`` not ``2.13.0-rc1``);
    ``[series] version`` a positive integer (not a string, float or boolean).
    """
    return _check(text, path)[0]


def _check(text: str, path: str | Path) -> tuple[list[UserError], Pin | None]:
    """(:func:`pin_problems`, the pin when there are none)."""
    import tomllib  # imported here (as packaging below): a CLI that reads no TOML does not pay for it

    from packaging.version import InvalidVersion, Version

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        return [toml_error(err, path)], None
    problems: list[UserError] = []

    def problem(message: str, section: str, key: str | None = None) -> None:
        problems.append(UserError(message, path=path, line=_key_line(text, section, key)))

    tables: dict[str, dict[str, object]] = {}
    for section in ("upstream", "series"):
        table = data.get(section)
        if table is None:
            problems.append(UserError(f"missing table [{section}] (see patches/manifest.toml in the repository for "
                                      "the shape)", path=path))
        elif not isinstance(table, dict):
            problem(f"{section} must be a table ([{section}] with keys), got {type(table).__name__}", section)
        else:
            tables[section] = table

    def value(section: str, key: str, kind: type, what: str) -> object | None:
        if section not in tables:
            return None  # reported above
        table = tables[section]
        if key not in table:
            problem(f"missing key {key!r} in [{section}]", section)
            return None
        got = table[key]
        if not isinstance(got, kind) or isinstance(got, bool):
            problem(f"{section}.{key} must be {what}, got {got!r}", section, key)
            return None
        return got

    repository = value("upstream", "repository", str, "a string")
    if isinstance(repository, str) and (not repository or repository.split() != [repository]):
        problem(f"upstream.repository must be a git URL or path without whitespace, got {repository!r}",
                "upstream", "repository")
    tag = value("upstream", "tag", str, "a string")
    if isinstance(tag, str) and not _is_tag_name(tag):
        problem(f"upstream.tag must be a git tag name (e.g. v2.13.0), got {tag!r}", "upstream", "tag")
    commit = value("upstream", "commit", str, "a string")
    if isinstance(commit, str) and not _HEX40.match(commit):
        problem(f"upstream.commit must be 40 lowercase hex digits, got {commit!r}", "upstream", "commit")
    wheel_version = value("upstream", "wheel_version", str, "a string")
    if isinstance(wheel_version, str):
        try:
            normal: str | None = str(Version(wheel_version))
        except InvalidVersion:
            normal = None
        if normal != wheel_version:
            # packaging strips surrounding whitespace and accepts other spellings ("v2.13.0", "2.13.0-rc1"); the
            # wheel file name and METADATA are built from the text as written, so it must be the normal form
            hint = f" (write {normal!r})" if normal is not None else ""
            problem(f"upstream.wheel_version must be a PEP 440 version in normal form, got {wheel_version!r}{hint}",
                    "upstream", "wheel_version")
    version = value("series", "version", int, "a positive integer (e.g. version = 1)")
    if isinstance(version, int) and version < 1:
        problem(f"series.version must be a positive integer, got {version}", "series", "version")
    if problems:
        return problems, None
    assert isinstance(repository, str) and isinstance(tag, str) and isinstance(commit, str)
    assert isinstance(wheel_version, str) and isinstance(version, int)
    return [], Pin(repository=repository, tag=tag, commit=commit, wheel_version=wheel_version,
                   series_version=version)


_TAG = re.compile(r"^[A-Za-z0-9_+][A-Za-z0-9._+-]*$")


def _is_tag_name(tag: str) -> bool:
    """Whether ``refs/tags/<tag>`` is a valid one-component git ref name (git-check-ref-format(1), restricted to the
    characters release tags use)."""
    return bool(_TAG.match(tag)) and ".." not in tag and not tag.endswith((".", ".lock"))


def update_pin(path: Path, **changes: str | int) -> None:
    """Rewrite keys of the manifest in place, keeping comments and layout.

    ``changes`` keys: ``tag``, ``commit``, ``wheel_version`` (section ``[upstream]``) and ``series_version``
    (``[series] version``). The result is validated with :func:`parse_pin` before it replaces the file.

    Raises:
        UserError: an unknown key, or a key absent from the file; the file is not a regular UTF-8 file.
    """
    keymap = {"tag": "tag", "commit": "commit", "wheel_version": "wheel_version", "series_version": "version",
              "repository": "repository"}
    text = read_utf8_file(path, "the pin manifest")
    for key, value in changes.items():
        if key not in keymap:
            raise UserError(f"unknown pin key {key!r}", path=path)
        literal = str(value) if isinstance(value, int) else f'"{value}"'
        pattern = re.compile(rf"^({re.escape(keymap[key])}\s*=\s*)(.*)$", re.MULTILINE)
        def _replace(match: re.Match[str], lit: str = literal) -> str:
            return match.group(1) + lit

        text, n = pattern.subn(_replace, text, count=1)
        if n != 1:
            raise UserError(f"key {keymap[key]!r} not found", path=path)
    parse_pin(text, path)  # a rejected update leaves the file as it was
    write_atomic(path, text)


def gitlink_commit(root: Path | None = None, submodule: str = "pytorch") -> str | None:
    """The commit the superproject's index records for ``submodule`` (a mode-160000 gitlink), or None.

    Reads ``git ls-files --stage -- <submodule>``; works without the submodule being cloned.
    """
    root = root or repo_root()
    out = try_git(root, "ls-files", "--stage", "--", submodule).out.decode("utf-8", "replace")
    for line in out.splitlines():
        mode, sha, _stage, _path = line.split(maxsplit=3)
        if mode == "160000":
            return sha
    return None

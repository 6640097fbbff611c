# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The upgrade's state on disk: ``<work>/state.json`` holds each step's outcome for one release, checkout and sources
(``patches/``, ``catch/``, :func:`sources_hash`), so a later run skips the steps that passed and goes on from the one
that did not. A damaged or hand-edited state is one line naming the file, never a traceback (:func:`load_state`)."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path
from typing import Any

from catch_tools.errors import UserError
from catch_tools.paths import source_files
from catch_tools.upgrade import steps
from catch_tools.userfiles import write_atomic

STATE_FILE = "state.json"
#: The step results a state may hold (a row of the report).
STATUSES = ("passed", "failed", "not run")


def sources_hash(project: Path) -> str:
    """sha256 over the source files of ``patches/`` and ``catch/`` (:func:`catch_tools.paths.source_files`: build
    outputs and caches skipped): a change reruns the steps from ``build`` on."""
    digest = hashlib.sha256()
    for top in ("patches", "catch"):
        for path in source_files(project / top):
            digest.update(str(path.relative_to(project)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


_JSON_TYPES = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean",
               type(None): "null"}


def load_state(work: Path) -> dict[str, Any]:
    """The state the last run saved in ``<work>/state.json``, or ``{}`` when there is none.

    The state is a JSON object: ``release``, ``project`` and ``sources`` (strings), ``outputs`` (name -> string) and
    ``steps`` (step name of :data:`~catch_tools.upgrade.steps.STEPS` -> row: ``status`` one of :data:`STATUSES`,
    ``seconds`` a number, ``detail``, ``next`` and ``log`` strings).

    Raises:
        UserError: the file cannot be read, or is not a state :func:`save_state` wrote (not a regular file, not UTF-8,
            not JSON, not an object, a value of the wrong type, an unknown step or status: a hand edit, a truncated
            file). The one line names the file (and the line of a JSON error) and says to remove it, which starts the
            steps over.
    """
    path = work / STATE_FILE

    def damaged(what: str, line: int | None = None) -> UserError:
        return UserError(f"{what}: not an upgrade state; remove it to start the steps over", path=path, line=line)

    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise damaged("not a regular file")
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise UserError(f"cannot read the upgrade state: {err.strerror or err}", path=path) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise damaged("not UTF-8", raw[:err.start].count(b"\n") + 1) from None
    except json.JSONDecodeError as err:
        raise damaged(f"invalid JSON ({err.msg})", err.lineno) from None
    problem = _state_problem(data)
    if problem:
        raise damaged(problem)
    assert isinstance(data, dict)
    return data


def _state_problem(data: object) -> str | None:
    """What makes ``data`` no state of :func:`save_state` (see :func:`load_state`), or None."""
    if not isinstance(data, dict):
        return f"{_JSON_TYPES.get(type(data), type(data).__name__)}, expected a JSON object"
    for key in ("release", "project", "sources"):
        if key in data and not isinstance(data[key], str):
            return f"{key!r} is not a string"
    outputs = data.get("outputs", {})
    if not isinstance(outputs, dict) or not all(isinstance(v, str) for v in outputs.values()):
        return "'outputs' is not an object of strings"
    rows = data.get("steps", {})
    if not isinstance(rows, dict):
        return "'steps' is not an object"
    for name, row in rows.items():
        if name not in steps.STEPS:
            return f"unknown step {name!r} (steps: {', '.join(steps.STEPS)})"
        if not isinstance(row, dict):
            return f"step {name!r} is not an object"
        if row.get("status") not in STATUSES:
            return f"step {name!r}: status {row.get('status')!r} is not one of {', '.join(STATUSES)}"
        seconds = row.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            return f"step {name!r}: 'seconds' is not a number"
        for key in ("detail", "next", "log"):
            if not isinstance(row.get(key, "" if key == "log" else None), str):
                return f"step {name!r}: {key!r} is missing or not a string"
    return None


def save_state(work: Path, state: dict[str, Any]) -> None:
    write_atomic(work / STATE_FILE, json.dumps(state, indent=1, sort_keys=True) + "\n")

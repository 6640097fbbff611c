# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Running the upgrade's steps (:mod:`catch_tools.upgrade.steps`) and the step report.

:func:`run` runs them in order, saves each outcome in ``<work>/state.json`` (:mod:`catch_tools.upgrade.state`) before
the next one starts and skips the steps that already passed for the same release, checkout and sources
(``patches/``, ``catch/``), so a run stopped by a failure or Ctrl-C goes on from the step that did not pass
(``--from STEP`` reruns from a given step; a run killed with no chance to clean up leaves sources that differ, and the
next run starts the steps over).

A run that does not end with every step passed (a failed step, an error, Ctrl-C) puts the pin manifest back byte for
byte as it found it (:class:`CheckoutGuard`); the next run that skips ``fetch`` writes the recorded choice again before
``build``. The upgrade starts only from a rebased pin (:func:`require_rebased_pin`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from catch_tools.errors import UserError
from catch_tools.git import locate, try_git
from catch_tools.pin import load_pin, manifest_path, parse_pin
from catch_tools.progress import Reporter
from catch_tools.upgrade import steps
from catch_tools.upgrade.state import load_state, save_state, sources_hash
from catch_tools.upgrade.steps import Context, StepFailed, record_flavour
from catch_tools.userfiles import write_atomic

#: ``fetch``'s outputs that say what it wrote into the manifest (written again when a later run skips ``fetch``).
_FETCH_EDIT = ("wheel_version", "flavour", "flavour_note")


def require_rebased_pin(project: Path, rebase_command: str) -> None:
    """Refuse to start the upgrade from a pin no rebase has moved.

    ``scripts/rebase.py`` writes the new release's pin into the work tree's ``patches/manifest.toml``
    (:func:`catch_tools.rebase.pinning.write_pin`) and the maintainer commits it with the new series after the
    upgrade (docs/upgrade.md). So the pin is rebased when its upstream ``tag`` or ``commit`` differs from the
    committed manifest's (``git show HEAD:./patches/manifest.toml``, a path relative to ``project``).

    Raises:
        UserError: the pin is the one committed in HEAD, or the move cannot be told (``project`` is no git work tree,
            or HEAD has no manifest). The one line names the manifest, the rebase command to run first
            (``rebase_command``) and ``--force``.
    """
    path = manifest_path(project)
    pin = load_pin(path, option="--project DIR")
    then = (f"first run the rebase: {rebase_command} (docs/upgrade.md), or pass --force to run the upgrade for "
            f"{pin.tag} as pinned")
    _bare, _git_dir, top, _why = locate(project)
    if top is None:
        raise UserError(f"the checkout is no git work tree, so whether scripts/rebase.py moved the pin ({pin.tag}) "
                        f"cannot be told; {then}", path=path)
    shown = try_git(project, "show", "HEAD:./patches/manifest.toml")
    if not shown.ok:
        raise UserError(f"HEAD has no patches/manifest.toml, so whether scripts/rebase.py moved the pin ({pin.tag}) "
                        f"cannot be told; {then}", path=path)
    committed = parse_pin(shown.out.decode("utf-8", "replace"), "HEAD:patches/manifest.toml")
    if (committed.tag, committed.commit) == (pin.tag, pin.commit):
        raise UserError(f"the pin ({pin.tag}) is the one committed in HEAD: no rebase has moved it to a new release; "
                        f"{then}", path=path)


class CheckoutGuard:
    """The checkout files the steps write (the pin manifest) as a run found them; :meth:`restore` puts them back."""

    def __init__(self, project: Path) -> None:
        self.saved = {path: path.read_bytes() for path in (manifest_path(project),)}

    def restore(self) -> None:
        """Write back every saved file whose bytes changed (a temporary file renamed over it: never half-written)."""
        for path, data in self.saved.items():
            try:
                if path.read_bytes() == data:
                    continue
            except FileNotFoundError:
                pass
            write_atomic(path, data)


def run(ctx: Context, start: str | None = None, progress: Reporter | None = None) -> dict[str, Any]:
    """Run the steps from the first one not passed (or from ``start``); return the report (see :func:`report`).

    Stops at the first failed step (later steps are reported ``not run``). The state is saved after every step. A run
    that does not end with every step passed (a failed step, an error, Ctrl-C) leaves the checkout's files as it
    found them (:class:`CheckoutGuard`); a run that skips ``fetch`` first writes ``fetch``'s recorded manifest edit
    again. ``progress``: the caller's display, told each step as it starts (transient) and ends (kept).

    Raises:
        UserError: ``start`` is not a step name, or the state file is damaged (:func:`load_state`).
    """
    if start is not None and start not in steps.STEPS:
        raise UserError(f"--from {start}: not a step (steps: {', '.join(steps.STEPS)})")
    shown = progress or Reporter()
    ctx.work.mkdir(parents=True, exist_ok=True)
    state = load_state(ctx.work)
    found = sources_hash(ctx.project)
    if state.get("release") != ctx.release or state.get("project") != str(ctx.project):
        # another release, or another checkout (the canary's scratch clone; the build venv's editable install is of
        # the checkout it was made from): every step reruns
        state = {"release": ctx.release, "project": str(ctx.project), "steps": {}, "outputs": {}}
    results: dict[str, dict[str, Any]] = state.setdefault("steps", {})
    if state.get("sources") != found:
        # patches/ or catch/ changed since the last run left them: every step reruns, fetch included (cheap: the wheel
        # is cached)
        results.clear()
    if start is not None:
        for name in list(steps.STEPS)[list(steps.STEPS).index(start):]:
            results.pop(name, None)
    ctx.outputs = dict(state.get("outputs", {}))
    state["sources"] = found  # a run killed on the way (no cleanup) leaves sources that differ: the next starts over
    guard = CheckoutGuard(ctx.project)
    finished = False
    try:
        if results.get("fetch", {}).get("status") == "passed" and all(k in ctx.outputs for k in _FETCH_EDIT):
            record_flavour(ctx.project, *(ctx.outputs[k] for k in _FETCH_EDIT))
        failed = False
        for name, (_title, func) in steps.STEPS.items():
            if results.get(name, {}).get("status") == "passed":
                continue
            if failed:
                results[name] = {"status": "not run", "seconds": 0.0, "detail": "", "next": ""}
                continue
            log = ctx.log(name)
            log.write_text("", encoding="utf-8")
            shown.step(f"upgrade: {name}...")
            started = time.monotonic()
            try:
                detail = func(ctx)
                results[name] = {"status": "passed", "seconds": round(time.monotonic() - started, 1),
                                 "detail": detail, "next": "", "log": str(log)}
            except StepFailed as err:
                failed = True
                results[name] = {"status": "failed", "seconds": round(time.monotonic() - started, 1),
                                 "detail": err.detail, "next": err.next_action, "log": str(err.log or log)}
            state["outputs"] = ctx.outputs
            save_state(ctx.work, state)
            shown.line(f"upgrade: {name}: {results[name]['status']} ({results[name]['seconds']} s)")
        finished = not failed
    finally:
        if not finished:
            guard.restore()
        state["outputs"] = ctx.outputs
        state["sources"] = sources_hash(ctx.project)
        save_state(ctx.work, state)
    return report(ctx, state)


def report(ctx: Context, state: dict[str, Any]) -> dict[str, Any]:
    """The step report: release, work directory, one row per step (status passed/failed/not run/pending, seconds,
    detail, next action on failure, log) and ``ok`` (every step passed)."""
    results = state.get("steps", {})
    rows = [{"step": name, "title": title, **results.get(name, {"status": "pending", "seconds": 0.0, "detail": "",
                                                                "next": ""})}
            for name, (title, _f) in steps.STEPS.items()]
    return {"release": ctx.release, "work": str(ctx.work), "ok": all(r["status"] == "passed" for r in rows),
            "total_seconds": round(sum(float(r["seconds"]) for r in rows), 1), "steps": rows,
            "outputs": state.get("outputs", {})}

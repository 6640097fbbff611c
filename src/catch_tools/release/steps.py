# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The rehearsal's steps: each a named, timed row of the report table (ok / FAILED / skipped), and the command
runner whose output goes to a step's log."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from catch_tools.errors import UserError

#: The checkout whose release scripts the rehearsal runs.
REPO_ROOT = Path(__file__).resolve().parents[3]


class StepFailed(Exception):
    """A rehearsal step found something wrong (the message is the table's result)."""


@dataclass
class Step:
    """One row of the table: step name, result (ok / FAILED / skipped), detail, seconds."""

    name: str
    result: str = "not run"
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Report:
    steps: list[Step] = field(default_factory=list)
    total_seconds: float = 0.0
    pids: list[int] = field(default_factory=list)
    work: str = ""
    urls: dict[str, str] = field(default_factory=dict)
    digests: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(s.result in ("ok", "skipped") for s in self.steps)

    def table(self) -> str:
        rows = ["| step | result | time |", "| --- | --- | --- |"]
        for s in self.steps:
            result = s.result + (f": {s.detail}" if s.detail else "")
            rows.append(f"| {s.name} | {result.replace('|', '/')} | {s.seconds:.1f} s |")
        rows.append(f"| **total** | {'ok' if self.ok else 'FAILED'} | {self.total_seconds:.1f} s |")
        return "\n".join(rows)


def run_logged(cmd: Sequence[str | Path], *, log: Path, env: dict[str, str] | None = None, cwd: Path | None = None,
         timeout: float = 1800) -> str:
    """Run ``cmd``; its output goes to ``log`` (appended) and is returned. Non-zero exit: StepFailed with the tail."""
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(map(str, cmd))}\n")
    try:
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise StepFailed(f"{Path(str(cmd[0])).name} timed out after {timeout:.0f} s (log {log})") from None
    with log.open("a") as out:
        out.write(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        tail = " / ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
        raise StepFailed(f"{Path(str(cmd[0])).name} exited {proc.returncode}: {tail} (log {log})")
    return proc.stdout


class StepRunner:
    """Runs named steps into :attr:`report` (:meth:`step`); ``fail_at`` makes the step of that name fail (to test what
    happens after a failure), ``on_step`` is told each finished row."""

    def __init__(self, work: Path, *, fail_at: str | None = None,
                 on_step: Callable[[Step], None] | None = None) -> None:
        self.work = work
        self.logs = work / "logs"
        self.fail_at = fail_at
        self.on_step = on_step or (lambda step: None)
        self.report = Report(work=str(work))

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[Step]:
        """Run the block as the step ``name``: its row is ok unless it raises (FAILED, with the error; an
        unexpected error becomes :class:`StepFailed`)."""
        step = Step(name)
        self.report.steps.append(step)
        start = time.monotonic()
        try:
            if self.fail_at == name:
                raise StepFailed("failure injected (--fail-at)")
            yield step
            if step.result == "not run":
                step.result = "ok"
        except (StepFailed, UserError) as err:
            step.result, step.detail = "FAILED", str(err)
            raise
        except Exception as err:  # noqa: BLE001 - an unexpected error still fails only its step, with a row
            step.result, step.detail = "FAILED", f"{type(err).__name__}: {err}"
            raise StepFailed(step.detail) from err
        finally:
            step.seconds = time.monotonic() - start
            self.on_step(step)

    def skip(self, name: str, reason: str) -> None:
        """A row for a step that does not run here, with the reason."""
        step = Step(name, "skipped", reason)
        self.report.steps.append(step)
        self.on_step(step)

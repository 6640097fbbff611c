# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The one progress style of the tooling, for every operation that can take more than ~2 s (applying or checking a
series, rebase steps, the wheel build, the interface check, upgrade steps, the proof gate).

On a terminal it is one transient ``rich`` line on stderr: a spinner, what is being done, a bar with done/total when
the count is known, and the elapsed time; finished steps are printed above it as plain lines. It is shown only when
stderr is a terminal and ``-q`` was not given (:func:`catch_tools.clikit.setup_logging`); otherwise every step line
goes to :mod:`logging` at INFO (visible with ``-v``), so CI logs and pipes stay plain and tests see no escape codes.

A command line opens the display (:func:`progress`); the library functions it calls take it as their one progress
parameter, ``progress: Reporter | None`` (None: no display, lines go to the log), and report on it: a finished step
(:meth:`Reporter.line`), what is being done now (:meth:`Reporter.step`), or a counted sub-step shown as one more
line of the display (:meth:`Reporter.counted`).

Usage::

    with progress("applying", total=len(patches)) as p:
        for patch in patches:
            ...
            p.advance()
    with progress("rebase") as p:
        p.line("v2.14.0: 0001-x.patch: applied")   # a finished step, kept on screen
        with p.paused():                             # while asking the user something
            reason = input("why? ")
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

log = logging.getLogger("catch_tools.progress")

#: The display being drawn, if any (rich draws one live display at a time; nested calls add a line to it).
_active: Progress | None = None

#: Below this many counted steps no bar is shown even on a terminal (the run is short).
MIN_STEPS = 20


def shown(enabled: bool | None = None) -> bool:
    """Whether progress is drawn: ``enabled`` when given, else stderr is a terminal and the ``catch_tools`` logger
    is not quieted (``-q`` sets it to ERROR)."""
    if enabled is not None:
        return enabled
    return sys.stderr.isatty() and logging.getLogger("catch_tools").getEffectiveLevel() <= logging.WARNING


class Reporter:
    """Handle of one running :func:`progress` display; every method is a no-op display-wise when it is not shown
    (lines then go to the log at INFO). ``Reporter()`` is a display that is never shown: what a library function
    reports on when its caller passes none."""

    def __init__(self, bar: Progress | None = None, task: TaskID | None = None) -> None:
        self.bar = bar
        self.task = task

    @property
    def shown(self) -> bool:
        """Whether this display is drawn."""
        return self.bar is not None

    @property
    def completed(self) -> float:
        """Steps counted so far (0 when not shown)."""
        return next((t.completed for t in self.bar.tasks if t.id == self.task), 0) if self.bar is not None else 0

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more done."""
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task, steps)

    def step(self, text: str) -> None:
        """Say what is being done now (replaces the description; transient)."""
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, description=text)
        log.debug("%s", text)

    def line(self, text: str) -> None:
        """A finished step worth keeping: printed above the live line on a terminal, logged at INFO otherwise."""
        if self.bar is not None:
            self.bar.console.print(text, markup=False, highlight=False)
        else:
            log.info("%s", text)

    @contextmanager
    def counted(self, description: str, total: int) -> Iterator[Reporter]:
        """A counted sub-step (``total`` steps, :meth:`advance` on the reporter yielded): one more line of this
        display while the block runs, shown only when this display is (and, as in :func:`progress`, only from
        :data:`MIN_STEPS` steps on)."""
        with progress(description, total, enabled=self.shown) as sub:
            yield sub

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop drawing while the caller talks to the terminal itself (``input()``), then go on."""
        if self.bar is None:
            yield
            return
        self.bar.stop()
        try:
            yield
        finally:
            self.bar.start()


@contextmanager
def progress(description: str, total: int | None = None, *, enabled: bool | None = None) -> Iterator[Reporter]:
    """Show progress of ``description`` (``total`` counted steps, or None for a spinner) while the block runs.

    ``enabled`` forces it on or off (default: :func:`shown`). A known ``total`` below :data:`MIN_STEPS` shows
    nothing: such a run is over before a bar helps. Always yields a :class:`Reporter`. Inside another running
    display (a download inside an upgrade step) it is one more line of that display, removed when the block ends.
    """
    global _active
    if not shown(enabled) or (total is not None and total < MIN_STEPS):
        yield Reporter()
        return
    if _active is not None:
        task = _active.add_task(description, total=total)
        try:
            yield Reporter(_active, task)
        finally:
            _active.remove_task(task)
        return
    # Imported here: rich costs start-up time that non-interactive runs (CI, pipes) do not need.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    if total is not None:
        columns += [BarColumn(), MofNCompleteColumn()]
    with Progress(*columns, TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        _active = bar
        try:
            yield Reporter(bar, bar.add_task(description, total=total))
        finally:
            _active = None

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""A ``rich`` progress bar for long runs, silent when stdout is not a terminal (CI logs, pipes, tests)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress

#: Below this many steps no bar is shown even on a terminal.
MIN_STEPS = 20


@contextmanager
def progress_bar(description: str, total: int, *, enabled: bool | None = None) -> Iterator[Progress | None]:
    """Yield a started :class:`rich.progress.Progress` with one task (advance it with ``bar.advance(0)``), or None
    when stdout is not a TTY, ``enabled`` is False, or ``total`` is small."""
    if enabled is None:
        enabled = sys.stdout.isatty()
    if not enabled or total < MIN_STEPS:
        yield None
        return
    # Imported here: rich costs start-up time that non-interactive runs (CI, pipes) do not need.
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=True) as bar:
        bar.add_task(description, total=total)
        yield bar

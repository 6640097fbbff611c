# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The one home of console output of the command lines: what a maintainer reads, and copies.

Two rules, whatever the width of the terminal and whether there is one (CI logs, ``| tee``, a pipe):

- A command the user must run is printed on one line (:func:`say`): plain text, never wrapped by rich, never inside a
  panel, so it can be copied as it is. Guidance that names commands goes through :func:`say` as a whole.
- A table (:func:`console`) is never cut: on a terminal it is as wide as the terminal and long cells fold onto the
  next line instead of ending in ``…`` (:func:`column`); when the output is not a terminal it has no width limit, so
  each row is one line with every name whole (``COLUMNS`` is ignored then).

Progress (:mod:`catch_tools.progress`) is drawn on a terminal only and is not output in this sense.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

#: The width of a console that is not a terminal: wide enough that no table of the tooling is wrapped or cut.
UNBOUNDED = 100_000


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an interactive terminal."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def console(*, stderr: bool = False, file: TextIO | None = None) -> Console:
    """A rich console on stdout (``stderr``: on stderr; ``file``: that stream): the terminal's width on a terminal,
    :data:`UNBOUNDED` otherwise (no wrapping, no truncation, no colour codes)."""
    from rich.console import Console

    stream = file or (sys.stderr if stderr else sys.stdout)
    if is_terminal(stream):
        return Console(file=stream)
    return Console(file=stream, width=UNBOUNDED, no_color=True, highlight=False, soft_wrap=False)


def print_table(tab: Table, *, stderr: bool = False) -> None:
    """Print ``tab`` on a :func:`console`; off a terminal the console is exactly as wide as the table's widest row
    (rich's ``Measurement``), so rows are whole and neither the title nor the cells are padded to
    :data:`UNBOUNDED`."""
    from rich.measure import Measurement

    shown = console(stderr=stderr)
    if shown.width == UNBOUNDED:
        shown.width = max(1, Measurement.get(shown, shown.options, tab).maximum)
    shown.print(tab)


def table(title: str | None = None) -> Table:
    """An empty rich table in the tooling's style (add columns with :func:`column`)."""
    from rich.table import Table

    return Table(title=title)


def column(tab: Table, header: str, **options: Any) -> None:
    """Add a column whose cells fold instead of being cut with ``…`` when the terminal is narrow."""
    options.setdefault("overflow", "fold")
    tab.add_column(header, **options)


def say(text: str, *, stderr: bool = False) -> None:
    """Print ``text`` as it is (no markup, no wrapping): each of its lines stays one line, so a command in it can be
    copied whole."""
    stream = sys.stderr if stderr else sys.stdout
    stream.write(text if text.endswith("\n") else text + "\n")
    stream.flush()


def command(*words: str | Path) -> str:
    """A command line of ``words``, each quoted for a POSIX shell only when it needs it (a path with a space)."""
    return " ".join(shlex.quote(str(w)) for w in words)


def quoted(text: str) -> str:
    """``text`` as one shell word in double quotes (as the guides write a ``--reason``), or single-quoted by
    :func:`command` when double quotes would not keep it as it is (``"``, ``$``, `````, ``\\``, ``!``)."""
    if any(ch in text for ch in '"$`\\!'):
        return shlex.quote(text)
    return f'"{text}"'

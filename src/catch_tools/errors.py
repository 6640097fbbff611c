# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""User errors and the CLI wrapper that reports them as one line.

Rule (CONTRIBUTING.md, "Bad input"): bad input gets a clear one-line error naming the file and line, a non-zero
exit, and nothing lost or half-changed. Never a traceback for a user error. Library code raises :class:`UserError`;
every CLI entry point runs through :func:`run_cli`, which prints ``error: <location>: <message>`` on stderr and exits
with the error's ``exit_code`` (2 unless the error says otherwise).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tomllib


class UserError(Exception):
    """An error caused by the user's input or environment, reported as one line without a traceback.

    Args:
        message: what is wrong and, when there is one, what to do about it (one line).
        path: the file the error is about, if any.
        line: the 1-based line in ``path``, if known.
        exit_code: the process exit status the CLI uses (default 2).
    """

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None, exit_code: int = 2):
        super().__init__(message)
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        self.exit_code = exit_code

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
            where += ": "
        return f"{where}{self.message}".replace("\n", " ")


_TOML_AT = re.compile(r"\s*\(at line (\d+), column \d+\)")


def toml_error(err: tomllib.TOMLDecodeError, path: str | Path) -> UserError:
    """A :class:`UserError` for a TOML syntax error in ``path``, with the line of the error.

    ``tomllib`` gives ``lineno`` from Python 3.14 on; before, the line is only in the message ("... (at line 3,
    column 7)"), which is where this reads it from then.
    """
    message = str(getattr(err, "msg", None) or err)
    line = getattr(err, "lineno", None)
    found = _TOML_AT.search(message)
    if found:
        line = line or int(found.group(1))
        message = _TOML_AT.sub("", message)
    return UserError(f"invalid TOML: {message}", path=path, line=line)


def run_cli(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None) -> int:
    """Run a CLI ``main(argv) -> exit code``; turn :class:`UserError` and Ctrl-C into one line on stderr.

    Returns the exit code (the caller passes it to ``sys.exit``). A closed standard output (``tool | head -1``) ends
    the run quietly with exit status 1, as the Python docs recommend ("Note on SIGPIPE", :mod:`signal`): stdout is
    flushed here and, once the reader has gone, pointed at ``os.devnull`` so that the interpreter's own flush at exit
    does not fail again. Unexpected exceptions still raise with a traceback: those are bugs, not user errors.
    """
    try:
        code = main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 1
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The one fault-injection point of the tooling, for the crash-safety tests: ``CATCH_FAULT=<point>[:<n>][,<action>]``.

Code that must survive a crash anywhere calls :func:`fault` with a point name at the places that matter (between
updating the work tree and moving HEAD, between two saved states of a rebase). Nothing happens unless ``CATCH_FAULT``
names that point; then, the ``n``-th time the process passes it (default: the first), the action runs:

* ``kill`` (default): SIGKILL to the process itself, like ``kill -9``: no cleanup at all;
* ``interrupt``: SIGINT, like Ctrl-C (``KeyboardInterrupt``: cleanup runs);
* ``pause=<seconds>``: sleep, so that a test can kill the process from outside in that window.

Points: ``patches.move-head`` (``apply``/``reverse`` on a git tree: index and work tree updated, HEAD not yet moved),
``patches.dir-commit`` (``apply --target-dir``: originals moved aside, new files not yet in place), and
``rebase.<point>`` for each of :data:`catch_tools.rebase.flow.CRASH_POINTS`.
"""

from __future__ import annotations

import os
import signal
import time

from catch_tools.errors import UserError

ENV = "CATCH_FAULT"
_passes: dict[str, int] = {}


def _parse(spec: str) -> tuple[str, int, str]:
    """``<point>[:<n>][,<action>]`` -> (point, n, action).

    Raises:
        UserError: ``n`` is not a positive integer, or the action is not one of the module doc's.
    """
    where, _, action = spec.partition(",")
    point, _, nth = where.partition(":")
    action = action or "kill"
    if nth and not (nth.isdigit() and int(nth) > 0):
        raise UserError(f"{ENV}={spec}: the pass count after ':' must be a positive integer")
    if action not in ("kill", "interrupt") and _seconds(action) is None:
        raise UserError(f"{ENV}={spec}: the action must be kill, interrupt or pause=<seconds>")
    return point, int(nth or 1), action


def _seconds(action: str) -> float | None:
    name, _, value = action.partition("=")
    try:
        return float(value) if name == "pause" else None
    except ValueError:
        return None


def fault(point: str) -> None:
    """Run ``CATCH_FAULT``'s action when it names ``point`` and this is the pass it counts (see module doc).

    Raises:
        UserError: ``CATCH_FAULT`` is malformed.
    """
    spec = os.environ.get(ENV)
    if not spec:
        return
    want, nth, action = _parse(spec)
    if want != point:
        return
    _passes[point] = _passes.get(point, 0) + 1
    if _passes[point] != nth:
        return
    pause = _seconds(action)
    if pause is not None:
        time.sleep(pause)
    elif action == "interrupt":
        # A process started from a non-interactive shell's background job inherits SIGINT ignored, and Python then
        # leaves it ignored: restore Ctrl-C's KeyboardInterrupt so the fault behaves as a real Ctrl-C.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.kill(os.getpid(), signal.SIGINT)
    else:
        os.kill(os.getpid(), signal.SIGKILL)

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The patch engine against ``git apply`` on generated cases from the real v2.13.0 tree (see
:mod:`patch_difftest`). The default run is a short seed set (every mutation class 3 times); ``tox -e difftest`` runs
5,000 cases. ``CATCH_DIFFTEST_CASES`` / ``CATCH_DIFFTEST_SEED`` change the size and seed; a failing case is
replayed with ``python tests/tools/patch_difftest.py --seed S --case I -v``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from patch_difftest import CLASSES, DELIBERATE, real_files, run_cases

pytestmark = pytest.mark.real


@pytest.fixture(scope="module")
def upstream_files(real_upstream: Path) -> list[tuple[str, bytes]]:
    return real_files(real_upstream)


def test_engine_agrees_with_git_apply(upstream_files: list[tuple[str, bytes]]) -> None:
    cases = int(os.environ.get("CATCH_DIFFTEST_CASES", str(3 * len(CLASSES))))
    seed = int(os.environ.get("CATCH_DIFFTEST_SEED", "1"))
    tally = run_cases(seed, range(cases), upstream_files)
    print(tally.report())
    assert sum(tally.cases.values()) == 2 * cases
    assert set(tally.cases) == set(CLASSES) or cases < len(CLASSES)
    assert not tally.failures, "\n".join(tally.failures[:20])
    assert all(key.split(":", 1)[1] in DELIBERATE for key in tally.deliberate)


#: (seed, case) pairs the long run found (each a fixed bug), replayed in every default run.
REGRESSIONS = [
    (1, 1374),  # a hunk matched over lines an earlier hunk wrote (git skips LINE_PATCHED lines)
]


def test_cases_the_long_run_found(upstream_files: list[tuple[str, bytes]]) -> None:
    for seed, case in REGRESSIONS:
        tally = run_cases(seed, [case], upstream_files)
        assert not tally.failures, "\n".join(tally.failures)

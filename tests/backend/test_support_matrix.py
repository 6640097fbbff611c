# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""docs/support.md (what runs natively, falls back or is unsupported on mlu) matches what the probes measure now."""

from __future__ import annotations

from mlu_helpers import REPO, run_script


def test_support_page_is_current():
    r = run_script(REPO / "tests" / "backend" / "support_matrix.py", "--check", "docs/support.md", timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]

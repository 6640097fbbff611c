# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Fork poisoning as with CUDA: a child forked after mlu was initialized gets CUDA's error, naming MLU, when it
touches mlu; CPU work and children forked before initialization are unaffected (torch_openreg's test_misc.py
checks the bad-fork state for its device).
"""

from __future__ import annotations

import textwrap

from mlu_helpers import run_python

SCRIPT = textwrap.dedent("""
    import os, torch

    def child(fn):
        pid = os.fork()
        if pid == 0:
            try:
                fn()
                os._exit(0)
            except RuntimeError as e:
                print("child error:", e, flush=True)
                os._exit(3)
        return os.waitpid(pid, 0)[1] >> 8

    print("before-init", child(lambda: torch.ones(2, device="mlu").sum().item()), flush=True)
    torch.ones(2, device="mlu")
    print("cpu", child(lambda: torch.ones(2).sum().item()), flush=True)
    print("seed", child(lambda: torch.manual_seed(1)), flush=True)
    print("bad-fork-flag", child(lambda: os._exit(0 if torch.mlu._is_in_bad_fork() else 1)), flush=True)
    print("mlu", child(lambda: torch.ones(2, device="mlu")), flush=True)
    print("to", child(lambda: torch.ones(2).to("mlu")), flush=True)
    print("parent", torch.ones(2, device="mlu").sum().item(), torch.mlu._is_in_bad_fork(), flush=True)
""")


def test_child_forked_after_init_is_poisoned():
    r = run_python(SCRIPT, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert "before-init 0" in lines  # not initialized yet in the parent: the child may use mlu
    assert "cpu 0" in lines and "seed 0" in lines and "bad-fork-flag 0" in lines
    assert "mlu 3" in lines and "to 3" in lines
    msg = ("Cannot re-initialize MLU in forked subprocess. To use MLU with multiprocessing, you must use the 'spawn' "
           "start method")
    assert sum(msg in line for line in lines) == 2
    assert "parent 2.0 False" in lines

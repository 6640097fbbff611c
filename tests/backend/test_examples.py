# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The demo networks (examples/resnet_digits.py, transformer_lm.py, serve_inference.py) with small step counts.

Each demo runs on mlu and on cpu in one process and writes its record to ``--result`` (JSON); the tests read it and
assert that training improves the metric, that the emulated mlu reproduces the cpu numbers for the same seed (the device
kernels run ATen's CPU kernels on the device buffers), that no op fell back to the CPU, and that the served
predictions equal the in-process model's. ``--threads 1`` keeps the runs fast on a busy CI machine.
"""

from __future__ import annotations

import json
import math
import re
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from mlu_helpers import REPO, run_script

EXAMPLES = REPO / "examples"
LOSS_TOLERANCE = 1e-4  # the same ATen kernels on both devices; allow for reduction-order noise only


def _run_demo(script: str, *args: str) -> tuple[dict[str, Any], str]:
    """Run ``examples/<script>`` on both devices; returns (the record of its ``--result`` file, stdout)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "result.json"
        out = run_script(EXAMPLES / script, "--device", "both", "--threads", "1", "--result", str(path), *args,
                         timeout=900)
        assert out.returncode == 0, out.stderr[-3000:]
        result = json.loads(path.read_text())
    assert out.stdout.splitlines()[-1].startswith(f"result: {path}"), out.stdout[-500:]
    assert max(len(line) for line in out.stdout.splitlines()) < 300  # the record is in the file, not the terminal
    assert [run["device"] for run in result["runs"]] == ["mlu", "cpu"]
    return result, out.stdout


def _by_device(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    mlu, cpu = result["runs"]
    return mlu, cpu


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


@pytest.mark.slow
def test_resnet_learns_and_mlu_reproduces_cpu():
    result, stdout = _run_demo("resnet_digits.py", "--steps", "30", "--batch-size", "32", "--log-every", "10")
    mlu, cpu = _by_device(result)
    for run in (mlu, cpu):
        assert len(run["losses"]) == 30
        assert _mean(run["losses"][-5:]) < 0.6 * _mean(run["losses"][:5]), run["losses"]
        assert run["test_accuracy"] >= 0.5  # ten classes: chance is 0.1
        assert run["ms_per_step"] > 0
        assert f"[{run['device']}] test loss" in stdout
    assert max(abs(a - b) for a, b in zip(mlu["losses"], cpu["losses"], strict=True)) <= LOSS_TOLERANCE
    assert mlu["test_accuracy"] == pytest.approx(cpu["test_accuracy"], abs=0.01)  # one image of the 359 at most
    assert mlu["fallback_ops"] == {}
    assert "mlu/cpu time per step:" in stdout


@pytest.mark.slow
def test_transformer_lm_learns_and_mlu_reproduces_cpu():
    result, stdout = _run_demo("transformer_lm.py", "--steps", "40", "--batch-size", "16", "--context", "32",
                               "--d-model", "64", "--eval-windows", "16", "--sample", "40", "--log-every", "20")
    mlu, cpu = _by_device(result)
    uniform_bpc = math.log2(result["vocab_size"])
    for run in (mlu, cpu):
        assert len(run["losses"]) == 40
        assert run["final_bpc"] < run["initial_bpc"] - 1.0, (run["initial_bpc"], run["final_bpc"])
        assert run["final_bpc"] < uniform_bpc - 1.0  # better than guessing among the corpus's characters
        assert run["final_perplexity"] == pytest.approx(2 ** run["final_bpc"], rel=1e-6)
        assert len(run["sample"]) == 40
        assert f"[{run['device']}] sample: The " in stdout
    assert max(abs(a - b) for a, b in zip(mlu["losses"], cpu["losses"], strict=True)) <= LOSS_TOLERANCE
    assert mlu["final_bpc"] == pytest.approx(cpu["final_bpc"], abs=1e-4)
    assert mlu["fallback_ops"] == {}


@pytest.mark.slow
def test_served_predictions_match_the_model_on_both_devices():
    result, stdout = _run_demo("serve_inference.py", "--steps", "30", "--requests", "5", "--log-every", "10")
    mlu, cpu = _by_device(result)
    labels = result["test_labels"]
    for run in (mlu, cpu):
        assert run["batch_images"] == len(labels)
        assert run["agree_with_eager"] == 1.0  # the reloaded program answers what the model in memory answers
        assert run["single_agree_with_batch"] is True
        accuracy = sum(p == t for p, t in zip(run["served_labels"], labels, strict=True)) / len(labels)
        assert accuracy == run["served_accuracy"] >= 0.5
        assert run["bad_request_status"] == 400 and "64 numbers" in run["bad_request_error"]
        assert run["ms_per_request"] > 0
    assert mlu["weights_device"] == ["mlu:0"] and cpu["weights_device"] == ["cpu"]
    assert mlu["served_labels"] == cpu["served_labels"]
    assert result["train_final_loss"] < result["train_first_loss"]
    assert "[mlu] serving on http://127.0.0.1:" in stdout


@pytest.mark.slow
def test_serve_mode_answers_until_interrupted():
    proc = subprocess.Popen([sys.executable, str(EXAMPLES / "serve_inference.py"), "--device", "mlu", "--serve",
                             "--steps", "3", "--requests", "1", "--threads", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            # Ctrl-C must reach the demo even when this runs from a job that ignores SIGINT (a
                            # background job of a non-interactive shell): Python then keeps it ignored.
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout is not None
        url = next(re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
                   for line in proc.stdout if line.startswith("serving "))
        with urllib.request.urlopen(f"{url}/health", timeout=60) as response:
            assert json.loads(response.read())["device"] == "mlu"
        body = json.dumps({"pixels": [[0] * 64, [16] * 64]}).encode()
        with urllib.request.urlopen(urllib.request.Request(f"{url}/predict", body), timeout=60) as response:
            answer = json.loads(response.read())
        assert len(answer["labels"]) == 2 and all(0 <= label <= 9 for label in answer["labels"])
        assert all(0 < c <= 1 for c in answer["confidence"])
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize(("script", "args", "message"), [
    ("resnet_digits.py", ["--device", "nope"], "error: --device nope"),
    ("transformer_lm.py", ["--device", "cpu", "--prompt", "\u20ac"], "error: character '\u20ac' does not occur"),
    ("serve_inference.py", ["--device", "mlu", "--steps", "0"], "error: --steps 0: must be at least 1"),
])
def test_bad_input_is_one_clean_error_line(script, args, message):
    out = run_script(EXAMPLES / script, *args)
    assert out.returncode == 2
    assert out.stderr.strip().startswith(message), out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr

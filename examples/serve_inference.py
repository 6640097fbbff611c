# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Export a trained digits ResNet with ``torch.export``, reload it and serve predictions over HTTP on mlu and cpu.

Usage: python examples/serve_inference.py [--device both|mlu|cpu] [--steps 120] [--requests 40] [--out DIR]
       python examples/serve_inference.py --device mlu --serve [--port 8000]

1. Trains ``DigitsResNet`` (examples/resnet_digits.py) for ``--steps`` steps on the first device.
2. For each device: wraps it so it takes raw scikit-learn digit rows (N, 64) with pixels 0..16 and returns (N, 10)
   logits, exports it with ``torch.export.export`` (dynamic batch size 1..1024) on that device, writes
   ``digits_resnet_<device>.pt2`` with ``torch.export.save`` and loads it back with ``torch.export.load``: the
   program's weights come back on the device they were exported on, so the server needs no model code.
3. Serves the reloaded program with ``http.server`` on 127.0.0.1 (an ephemeral port unless ``--port``):
   ``POST /predict`` with ``{"pixels": [[64 numbers], ...]}`` answers ``{"labels": [...], "confidence": [...],
   "device": "mlu"}``; ``GET /health`` answers the device and the program file.
4. Sends ``--requests`` single-image requests (latency per request: median and 90th percentile, HTTP included) and
   one request with the whole test split (accuracy of the served labels, and whether they equal the labels of the
   in-process eager model on the same device).

``--serve`` keeps the first device's server running after the checks until Ctrl-C. Ends with a summary table and the
line naming the result file (``--result``, JSON).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import torch
from torch import nn

from _demo import (
    DemoError,
    add_common_args,
    apply_threads,
    check_positive,
    emit_result,
    fallbacks,
    parse_devices,
    print_summary,
    reset_fallbacks,
    run,
    say,
)
from resnet_digits import load_digits_split, train

MAX_BATCH = 1024  # the exported program's dynamic batch dimension is 1..MAX_BATCH


class PixelsToLogits(nn.Module):
    """(N, 64) float32 raw digit pixels in 0..16 (scikit-learn's ``load_digits().data`` rows) -> (N, 10) logits."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.net((pixels / 16.0).reshape(-1, 1, 8, 8))


def export_program(model: nn.Module, example: torch.Tensor, path: Path) -> torch.export.ExportedProgram:
    """Export eval-mode ``model`` at ``example``'s device with a dynamic batch dim, save it to ``path``, load it back.

    ``torch.export.export`` traces the model to an ATen graph (weights included); ``torch.export.save`` writes it as
    a ``.pt2`` zip; ``torch.export.load`` restores tensors on their saved device (upstream torch.export API).
    """
    batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)
    program = torch.export.export(model.eval(), (example,), dynamic_shapes=({0: batch},))
    torch.export.save(program, path)
    return torch.export.load(path)


def parse_pixels(body: bytes) -> torch.Tensor:
    """Request body -> (N, 64) float32; ValueError (sent back as HTTP 400) for anything but 1..MAX_BATCH rows of 64
    numbers in 0..16 under the key ``pixels``."""
    try:
        rows = json.loads(body)["pixels"]
    except (ValueError, KeyError, TypeError):
        raise ValueError('body must be JSON {"pixels": [[64 numbers], ...]}') from None
    if not isinstance(rows, list) or not 1 <= len(rows) <= MAX_BATCH:
        raise ValueError(f'"pixels" must be a list of 1..{MAX_BATCH} rows')
    for i, row in enumerate(rows):
        if (not isinstance(row, list) or len(row) != 64
                or not all(isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 16 for v in row)):
            raise ValueError(f"row {i}: expected 64 numbers in 0..16")
    return torch.tensor(rows, dtype=torch.float32)


class DigitsServer(ThreadingHTTPServer):
    """An HTTP server that owns one loaded program on one device; requests run it one at a time under a lock."""

    daemon_threads = True

    def __init__(self, port: int, program: nn.Module, device: torch.device, source: Path) -> None:
        super().__init__(("127.0.0.1", port), PredictHandler)
        self.program, self.device, self.source = program, device, source
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def predict(self, pixels: torch.Tensor) -> tuple[list[int], list[float]]:
        """(N, 64) CPU pixels -> (labels, softmax confidence of each label), computed on the server's device."""
        with self.lock, torch.no_grad():
            probs = torch.softmax(self.program(pixels.to(self.device)), dim=1)
            confidence, labels = probs.max(dim=1)
            return labels.cpu().tolist(), confidence.cpu().tolist()


class PredictHandler(BaseHTTPRequestHandler):
    """``POST /predict`` and ``GET /health``; every answer is JSON, errors as ``{"error": message}``."""

    server: DigitsServer

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802  (http.server's method naming)
        if self.path != "/health":
            self._reply(404, {"error": f"no such path {self.path}; use POST /predict or GET /health"})
            return
        self._reply(200, {"device": str(self.server.device), "program": str(self.server.source)})

    def do_POST(self) -> None:  # noqa: N802
        if self.path != "/predict":
            self._reply(404, {"error": f"no such path {self.path}; use POST /predict"})
            return
        try:
            pixels = parse_pixels(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except ValueError as exc:
            self._reply(400, {"error": str(exc)})
            return
        labels, confidence = self.server.predict(pixels)
        self._reply(200, {"labels": labels, "confidence": confidence, "device": str(self.server.device)})

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (keep the demo's output readable)
        return


def post(url: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """POST ``payload`` as JSON; returns (HTTP status, decoded JSON answer), also for 4xx answers."""
    request = urllib.request.Request(url, json.dumps(payload).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def checked_post(url: str, payload: dict[str, Any]) -> dict[str, Any]:
    """``post`` that raises DemoError unless the server answers HTTP 200."""
    status, answer = post(url, payload)
    if status != 200:
        raise DemoError(f"{url} answered {status}: {answer}")
    return answer


def single_image_requests(url: str, pixels: torch.Tensor, n: int) -> tuple[list[float], list[int]]:
    """POST rows 0, 1, ... of ``pixels`` one per request, ``n`` times; returns (latency ms per request, labels)."""
    latencies, labels = [], []
    for i in range(n):
        row = pixels[i % len(pixels)].tolist()
        start = time.perf_counter()
        answer = checked_post(url, {"pixels": [row]})
        latencies.append((time.perf_counter() - start) * 1000.0)
        labels.append(answer["labels"][0])
    return latencies, labels


def serve_and_check(device: torch.device, trained: nn.Module, out_dir: Path, pixels: torch.Tensor,
                    labels: torch.Tensor, n_requests: int, port: int) -> tuple[DigitsServer, dict[str, Any]]:
    """Export, reload and serve ``trained`` on ``device``, then query it; returns the running server and the record."""
    model = PixelsToLogits(trained).to(device).eval()
    reset_fallbacks(device)
    path = out_dir / f"digits_resnet_{device.type}{device.index if device.index is not None else ''}.pt2"
    start = time.perf_counter()
    program = export_program(model, pixels[:8].to(device), path).module()
    export_s = time.perf_counter() - start
    weights_on = {str(p.device) for p in program.parameters()}
    say(device, f"exported + saved + reloaded {path.name} ({path.stat().st_size / 1024:.0f} KiB) in {export_s:.1f} s; "
                f"weights on {', '.join(sorted(weights_on))}")
    server = DigitsServer(port, program, device, path)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    say(device, f"serving on {server.url}/predict")

    latencies, single_labels = single_image_requests(f"{server.url}/predict", pixels, n_requests)
    start = time.perf_counter()
    answer = checked_post(f"{server.url}/predict", {"pixels": pixels.tolist()})
    batch_ms = (time.perf_counter() - start) * 1000.0
    served = answer["labels"]
    with torch.no_grad():
        eager = model(pixels.to(device)).argmax(dim=1).cpu().tolist()
    bad_status, bad_answer = post(f"{server.url}/predict", {"pixels": [[0] * 63]})
    record = {
        "device": str(device), "program": str(path), "requests": n_requests,
        "ms_per_request": statistics.median(latencies),
        "p90_ms_per_request": sorted(latencies)[math.ceil(0.9 * len(latencies)) - 1],  # nearest-rank percentile
        "batch_images": len(served), "batch_ms": batch_ms,
        "served_accuracy": sum(p == t for p, t in zip(served, labels.tolist(), strict=True)) / len(served),
        "agree_with_eager": sum(p == e for p, e in zip(served, eager, strict=True)) / len(served),
        "single_agree_with_batch": all(s == served[i % len(served)] for i, s in enumerate(single_labels)),
        "served_labels": served, "bad_request_status": bad_status, "bad_request_error": bad_answer.get("error"),
        "weights_device": sorted(weights_on), "fallback_ops": fallbacks(device),
    }
    say(device, f"{n_requests} single-image requests: median {record['ms_per_request']:.1f} ms, "
                f"p90 {record['p90_ms_per_request']:.1f} ms per request")
    say(device, f"one request with {len(served)} images: {batch_ms:.1f} ms; served accuracy "
                f"{record['served_accuracy']:.4f}; equal to the eager model's labels: {record['agree_with_eager']:.0%}")
    say(device, f"malformed request -> HTTP {bad_status}: {record['bad_request_error']}")
    return server, record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(parser, steps=120)
    parser.add_argument("--requests", type=int, default=40, help="single-image requests per device (default: 40)")
    parser.add_argument("--out", type=Path, default=None, help="keep the .pt2 programs here (default: a temp dir)")
    parser.add_argument("--serve", action="store_true", help="keep serving on the first device until Ctrl-C")
    parser.add_argument("--port", type=int, default=0, help="port for --serve (default: 0 = any free port)")
    args = parser.parse_args(argv)
    devices = parse_devices(args.device)
    apply_threads(args.threads)
    check_positive(steps=args.steps, requests=args.requests, log_every=args.log_every)
    if not 0 <= args.port <= 65535:
        raise DemoError(f"--port {args.port}: must be 0..65535")
    if args.out is not None:
        try:
            args.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DemoError(f"--out {args.out}: {exc.strerror}") from None

    say(devices[0], f"training DigitsResNet for {args.steps} steps (seed {args.seed}) to serve")
    trained, train_record = train(devices[0], args.seed, args.steps, log_every=args.log_every)
    _, _, x_test, y_test = load_digits_split(args.seed)
    pixels = (x_test * 16.0).reshape(len(x_test), 64)  # back to the raw 0..16 rows a client sends

    runs: list[dict[str, Any]] = []
    servers: list[DigitsServer] = []
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = args.out or Path(tmp)
        for i, device in enumerate(devices):
            port = args.port if (args.serve and i == 0) else 0
            try:
                server, record = serve_and_check(device, trained, out_dir, pixels, y_test, args.requests, port)
            except OSError as exc:
                raise DemoError(f"--port {port}: {exc.strerror}") from None
            servers.append(server)
            runs.append(record)
        print_summary("Exported DigitsResNet served over HTTP", runs,
                      [("served_accuracy", "served acc", ".4f"), ("agree_with_eager", "= eager", ".0%"),
                       ("ms_per_request", "ms/request", ".1f"), ("p90_ms_per_request", "p90 ms", ".1f"),
                       ("batch_ms", f"ms/{len(pixels)} imgs", ".1f")],
                      time_key="ms_per_request", time_label="latency per request")
        emit_result("serve_inference", args.seed, runs, args.result, trained_on=train_record["device"],
                    train_first_loss=train_record["losses"][0], train_final_loss=train_record["losses"][-1],
                    eager_test_accuracy=train_record["test_accuracy"], test_labels=y_test.tolist())
        for server in servers[1:] if args.serve else servers:
            server.shutdown()
        if args.serve:
            row = [int(v) for v in pixels[0].tolist()]
            print(f"serving {servers[0].source} on {servers[0].url} (Ctrl-C stops); a test image of a "
                  f"{int(y_test[0])}:\n  curl -s {servers[0].url}/predict -d '{json.dumps({'pixels': [row]})}'",
                  flush=True)
            try:
                threading.Event().wait()
            except KeyboardInterrupt:
                servers[0].shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(run(main))

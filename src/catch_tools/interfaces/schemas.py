# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Layer 2: operator schemas, plus the runtime facts layer 1 compares; both from probes of the unpacked wheels.

Each wheel is unpacked into its own directory and probed in its own interpreter (:mod:`._probe`) with
``PYTHONPATH=<tree>``, so ``import torch`` finds the unpacked torch before any installed one; the probe's
``torch.__file__`` is checked to be inside the tree. torch's pure-Python dependencies come from the interpreter's
site-packages (``--python`` picks the interpreter; it needs sympy, networkx, jinja2, fsspec, filelock,
typing-extensions: e.g. any environment with torch installed).

Rules (PyTorch's ``check_forward_backward_compatibility.py``): with ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` the combined
wheel's schema set equals upstream's (a difference is incompatible if a schema is gone, review if one is added); with
the backend imported every added schema is in a backend namespace (else review) and every upstream schema has a
backward-compatible match (``FunctionSchema.is_backward_compatible_with``, empty allow-list; else incompatible).
Modules the backend's import pulls in (``torch._dynamo``...) can register upstream ops of their own; those are
told apart by probing upstream with the same ``torch.*`` modules imported.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeGuard

from catch_tools.interfaces import _probe
from catch_tools.interfaces.pair import WheelPair
from catch_tools.interfaces.report import ERROR, INCOMPATIBLE, REVIEW, LayerResult
from catch_tools.paths import cache_dir
from catch_tools.userfiles import write_atomic
from catch_tools.wheel.inputs import BACKEND_PACKAGE

log = logging.getLogger(__name__)

BACKEND_NAMESPACES = ("torch_mlu", "mlu")
PROBE_TIMEOUT_S = 600


class ProbeError(Exception):
    """A probe could not run; the message is one line."""


class Probes:
    """Runs and caches probes of the two wheels of a :class:`WheelPair`."""

    def __init__(self, pair: WheelPair, python: str | None = None):
        self.pair = pair
        self.python = python or sys.executable
        self._results: dict[tuple[str, str], Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._tmp = tempfile.TemporaryDirectory(prefix="catch-probe-")

    def close(self) -> None:
        """Wait for prefetched probes, remove probe files."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self._tmp.cleanup()

    def prefetch(self, backend: bool) -> None:
        """Start the plain probes of both wheels (and with ``backend`` the combined wheel's backend probe, once
        upstream's schemas are known) in background threads, so that they overlap with each other and with the
        layers that need no probe; :meth:`run` then waits for their results. Errors surface from :meth:`run`."""
        if self._pool is not None:
            return
        self._pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="catch-probe")

        def plain(which: str) -> None:
            self.pair.tree("upstream")  # the combined tree hard-links upstream's files: upstream first
            self.pair.tree(which)
            self.run(which)

        def with_backend() -> None:
            old = self.run("upstream")
            if "schemas" in old:
                self.run("combined", "backend", BACKEND_PACKAGE, bc_against=old["schemas"])

        def quiet(fn: Any, *args: Any) -> None:
            with contextlib.suppress(Exception):  # the layer that needs the result runs it again and reports
                fn(*args)

        for which in ("upstream", "combined"):
            self._pool.submit(quiet, plain, which)
        if backend:
            self._pool.submit(quiet, with_backend)

    def run(self, which: str, mode: str = "plain", arg: str | None = None,
            bc_against: list[str] | None = None) -> dict[str, Any]:
        """Probe ``which`` ("upstream"/"combined") in ``mode`` (see :mod:`._probe`); cached per (which, mode); a
        probe already running (see :meth:`prefetch`) is waited for, not started twice.

        Raises:
            ProbeError: the child failed (last stderr line quoted), or imported torch from outside the tree.
        """
        key = (which, mode)
        with self._lock:
            future = self._results.get(key)
            owner = future is None
            if future is None:
                future = self._results[key] = Future()
        if not owner:
            return future.result()
        try:
            result = self._run(which, mode, arg, bc_against)
        except BaseException as err:
            with self._lock:  # a failed probe may be retried (the error is reported by the caller)
                del self._results[key]
            future.set_exception(err)
            raise
        future.set_result(result)
        return result

    def _run(self, which: str, mode: str, arg: str | None, bc_against: list[str] | None) -> dict[str, Any]:
        tree = self.pair.tree(which)
        stored = self._stored_path(which, mode, bc_against)
        if stored is not None:
            cached = _read_stored_probe(stored, tree)
            if cached is not None:
                return cached
        work = Path(self._tmp.name) / f"{which}-{mode}"
        work.mkdir(parents=True, exist_ok=True)
        out = work / "out.json"
        dropped = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONDONTWRITEBYTECODE")
        env = {k: v for k, v in os.environ.items() if k not in dropped}
        # bytecode is written into the temporary tree so later probes of the same tree import faster
        env.update(PYTHONPATH=str(tree), PYTHONNOUSERSITE="1",
                   TORCH_DEVICE_BACKEND_AUTOLOAD="1" if mode == "backend" else "0")
        if bc_against is not None:
            old = work / "old-schemas.json"
            old.write_text(json.dumps(bc_against))
            env["CATCH_PROBE_BC_AGAINST"] = str(old)
        argv = [self.python, "-c", Path(_probe.__file__).read_text(encoding="utf-8"), str(out), mode]
        if arg:
            argv.append(arg)
        try:
            proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                                  check=False)
        except subprocess.TimeoutExpired:
            raise ProbeError(f"probe of the {which} wheel timed out after {PROBE_TIMEOUT_S} s") from None
        except OSError as err:
            raise ProbeError(f"probe of the {which} wheel could not start {self.python}: {err.strerror}") from None
        if proc.returncode != 0 or not out.is_file():
            lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
            raise ProbeError(f"probe of the {which} wheel ({mode}) failed: {lines[-1] if lines else 'no output'}")
        try:
            result = json.loads(out.read_text(encoding="utf-8"))
        except ValueError:
            result = None
        if not probe_shape_ok(result):
            raise ProbeError(f"probe of the {which} wheel ({mode}) wrote a result of the wrong shape")
        if not Path(result["torch_file"]).resolve().is_relative_to(tree.resolve()):
            raise ProbeError(f"probe imported torch from {result['torch_file']}, not from the unpacked {which} wheel")
        if stored is not None:
            _store_probe(stored, result)
        return result

    def _stored_path(self, which: str, mode: str, bc_against: list[str] | None) -> Path | None:
        """Where the plain probe of a cached upstream tree is kept (None: not cacheable).

        Key: the wheel's sha256, the probe's source, and the interpreter (path and modification time).
        """
        if which != "upstream" or mode != "plain" or bc_against is not None or not self.pair.cache:
            return None
        source = Path(_probe.__file__).read_bytes()
        interp = Path(self.python)
        stamp = f"{interp.resolve()}:{interp.stat().st_mtime_ns}" if interp.exists() else self.python
        digest = hashlib.sha256(source + stamp.encode()).hexdigest()[:16]
        return cache_dir() / "probes" / f"{self.pair.upstream_sha256()}-{digest}.json"

    def plain_pair(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Upstream and combined probed with autoload off, in parallel (trees unpacked first, upstream first)."""
        self.pair.tree("upstream")
        self.pair.tree("combined")
        with ThreadPoolExecutor(max_workers=2) as pool:
            up = pool.submit(self.run, "upstream")
            new = pool.submit(self.run, "combined")
            return up.result(), new.result()


#: The keys of a probe result (:mod:`._probe`) and their JSON types; ``schemas`` and the others after them are absent
#: when torch lacks the functions they come from, ``backend_file`` outside the backend mode.
_PROBE_KEYS: dict[str, type] = {"torch_file": str, "version": str, "cxx11_abi": bool, "abi_attrs": dict,
                                "import_failures": list, "modules": list}
_PROBE_OPTIONAL: dict[str, type] = {"backend_file": str, "schemas": list, "class_schemas": list, "bc_failures": list}


def probe_shape_ok(result: object) -> TypeGuard[dict[str, Any]]:
    """True when ``result`` has the shape :mod:`._probe` writes: an object with :data:`_PROBE_KEYS` of their types,
    optional keys of theirs, and lists of strings."""
    if not isinstance(result, dict):
        return False
    for key, kind in (*_PROBE_KEYS.items(), *_PROBE_OPTIONAL.items()):
        if key not in result:
            if key in _PROBE_KEYS:
                return False
            continue
        value = result[key]
        if not isinstance(value, kind) or (isinstance(value, list) and not all(isinstance(v, str) for v in value)):
            return False
    return True


def _read_stored_probe(path: Path, tree: Path) -> dict[str, Any] | None:
    """The cached probe at ``path``, or None when there is none or it cannot be trusted: unreadable, not JSON, not of
    a probe's shape (:func:`probe_shape_ok`), or of a torch outside ``tree``; such a file is ignored with a warning
    (the probe runs again and replaces it)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        log.warning("cached probe %s is unreadable (%s): probing again", path, err)
        return None
    if not probe_shape_ok(data) or not Path(data["torch_file"]).resolve().is_relative_to(tree.resolve()):
        log.warning("cached probe %s is not a probe result of this tree: probing again", path)
        return None
    return data


def _store_probe(path: Path, result: dict[str, Any]) -> None:
    """Keep ``result`` at ``path`` (:func:`~catch_tools.userfiles.write_atomic`); a cache that cannot be written is a
    warning, not an error (the next check probes again)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(result))
    except OSError as err:
        log.warning("cannot keep the probe in the cache %s: %s", path, err.strerror or err)


def runtime_facts(probes: Probes, res: LayerResult) -> None:
    """Layer 1's runtime part: ``compiled_with_cxx11_abi()`` and ``torch._C`` ABI attributes equal."""
    try:
        up, new = probes.plain_pair()
    except ProbeError as err:
        res.add(ERROR, "probe-failed", str(err))
        return
    if up["cxx11_abi"] != new["cxx11_abi"]:
        res.add(INCOMPATIBLE, "cxx11-abi-changed",
                f"torch.compiled_with_cxx11_abi() {up['cxx11_abi']} -> {new['cxx11_abi']}")
    if up["abi_attrs"] != new["abi_attrs"]:
        res.add(INCOMPATIBLE, "pybind11-abi-changed",
                f"torch._C ABI attributes {up['abi_attrs']} -> {new['abi_attrs']}")
    names = ", ".join(sorted(up["abi_attrs"])) or "none"
    res.notes.append(f"runtime ABI facts compared: compiled_with_cxx11_abi, torch._C attributes: {names}")


def in_namespace(schema: str, namespaces: tuple[str, ...]) -> bool:
    """True for ``ns::op...`` with ``ns`` in ``namespaces`` (custom classes: ``__torch__.torch.classes.ns.``)."""
    if schema.split("(", 1)[0].split("::", 1)[0] in namespaces and "::" in schema.split("(", 1)[0]:
        return True
    return any(f"__torch__.torch.classes.{ns}." in schema for ns in namespaces)


def compare_plain(old: dict[str, Any], new: dict[str, Any], res: LayerResult) -> None:
    """Backend not imported: schema sets (operators and custom classes) must be equal."""
    for key, label in (("schemas", "operator"), ("class_schemas", "custom-class")):
        before, after = set(old[key]), set(new[key])
        for text in sorted(before - after):
            res.add(INCOMPATIBLE, "schema-changed-without-backend", f"upstream {label} schema missing: {text}")
        for text in sorted(after - before):
            res.add(REVIEW, "schema-added-without-backend", f"{label} schema added with the backend off: {text}")


def stray_additions(old: dict[str, Any], with_backend: dict[str, Any], namespaces: tuple[str, ...]) -> list[str]:
    """Schemas present with the backend imported, absent upstream, and outside ``namespaces``."""
    out: list[str] = []
    for key in ("schemas", "class_schemas"):
        added = set(with_backend[key]) - set(old[key])
        out.extend(sorted(s for s in added if not in_namespace(s, namespaces)))
    return out


def compare_backend(with_backend: dict[str, Any], baseline: dict[str, Any], namespaces: tuple[str, ...],
                    res: LayerResult) -> None:
    """Backend imported: BC of every upstream schema (``bc_failures`` from the probe), additions confined to
    ``namespaces`` and nothing removed, both relative to ``baseline`` (upstream with the same modules imported)."""
    for text in with_backend.get("bc_failures", []):
        res.add(INCOMPATIBLE, "schema-not-backward-compatible",
                f"no backward-compatible schema with the backend imported for: {text}")
    for text in stray_additions(baseline, with_backend, namespaces):
        res.add(REVIEW, "schema-added-outside-backend", f"schema added outside {'/'.join(namespaces)}: {text}")
    for key in ("schemas", "class_schemas"):
        for text in sorted(set(baseline[key]) - set(with_backend[key])):
            res.add(INCOMPATIBLE, "schema-removed-by-backend", f"schema gone when the backend is imported: {text}")


def check_schemas(probes: Probes, namespaces: tuple[str, ...] = BACKEND_NAMESPACES) -> LayerResult:
    """Run layer 2 (see module doc)."""
    res = LayerResult(2)
    try:
        old, new = probes.plain_pair()
        if "schemas" not in old or "schemas" not in new:
            raise ProbeError("torch has no torch._C._jit_get_all_schemas (not a real torch build)")
        compare_plain(old, new, res)
        res.notes.append(f"{len(old['schemas'])} operator and {len(old['class_schemas'])} custom-class schemas "
                         "upstream")
        if probes.pair.new.get(f"{BACKEND_PACKAGE}/__init__.py") is None:
            res.notes.append(f"combined wheel has no {BACKEND_PACKAGE} package: backend probe skipped")
            return res
        with_backend = probes.run("combined", "backend", BACKEND_PACKAGE, bc_against=old["schemas"])
        baseline = old
        if stray_additions(old, with_backend, namespaces):
            modules = Path(probes._tmp.name) / "modules.json"
            modules.write_text(json.dumps([m for m in with_backend["modules"] if m != "torch.mlu"]))
            baseline = probes.run("upstream", "modules", str(modules))
            res.notes.append("upstream re-probed with the backend's torch.* modules imported "
                             f"({len(with_backend['modules'])} modules)")
        compare_backend(with_backend, baseline, namespaces, res)
        added = len(set(with_backend["schemas"]) - set(baseline["schemas"]))
        res.notes.append(f"backend import adds {added} schema(s); backend at {with_backend.get('backend_file')}")
    except ProbeError as err:
        res.add(ERROR, "probe-failed", str(err))
    return res

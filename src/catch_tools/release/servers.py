# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Loopback servers for a release rehearsal: a static HTTP server (the package index) and Debian's
``docker-registry`` (the CNCF distribution registry, an OCI registry). Both listen on 127.0.0.1 only, on a free
port, log into a file, and stop (SIGTERM, then SIGKILL after 10 s) when their context exits, also on an error.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from catch_tools.errors import UserError

LOOPBACK = "127.0.0.1"


@dataclass
class Server:
    """A running server: its URL (``http://127.0.0.1:<port>``), process and log file."""

    name: str
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


def stop(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """Terminate ``proc`` and wait for it (SIGKILL after ``grace`` seconds)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_ready(server: Server, probe: str, timeout: float) -> None:
    """Poll ``probe`` (a URL) until it answers HTTP 200; bounded by ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise UserError(f"{server.name} exited with status {server.proc.returncode} at start: "
                            f"{server.log.read_text(errors='replace')[-500:]}", path=server.log)
        try:
            with urllib.request.urlopen(probe, timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    raise UserError(f"{server.name} did not answer {probe} within {timeout:.0f} s", path=server.log)


@contextlib.contextmanager
def static_http(root: Path, log: Path, timeout: float = 30.0) -> Iterator[Server]:
    """Serve ``root`` with Python's ``http.server`` on 127.0.0.1 and a port the kernel picks (no race).

    The access log (one line per request: ``"GET /files/... HTTP/1.1" 200``) goes to ``log``.
    """
    root.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind", LOOPBACK,
                                 "--directory", str(root)], stdout=subprocess.PIPE, stderr=out)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()  # "Serving HTTP on 127.0.0.1 port 41235 (http://...) ..."
        found = re.search(r" port (\d+) ", line)
        if not found:
            raise UserError(f"http.server did not report its port: {line.strip()!r}", path=log)
        server = Server("index (http.server)", f"http://{LOOPBACK}:{found.group(1)}", proc, log)
        _wait_ready(server, server.url + "/", timeout)
        yield server
    finally:
        stop(proc)
        if proc.stdout is not None:
            proc.stdout.close()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


REGISTRY_CONFIG = """version: 0.1
log:
  level: info
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: {storage}
  delete:
    enabled: true
http:
  addr: {addr}
"""


@contextlib.contextmanager
def oci_registry(storage: Path, log: Path, timeout: float = 30.0, tries: int = 3) -> Iterator[Server]:
    """Run ``docker-registry serve`` (Debian's package of the CNCF distribution registry) on 127.0.0.1.

    The blobs and manifests go to ``storage``; no authentication, plain HTTP (clients must mark the registry
    insecure: see :func:`registries_conf`). A free port is picked and, if another process takes it before the
    registry binds it, up to ``tries`` ports are tried.

    Raises:
        UserError: ``docker-registry`` is not installed or does not start.
    """
    exe = shutil.which("docker-registry")
    if exe is None:
        raise UserError("docker-registry not found (Debian: apt-get install docker-registry)")
    storage.mkdir(parents=True, exist_ok=True)
    config = storage.parent / "registry-config.yml"
    for attempt in range(tries):
        addr = f"{LOOPBACK}:{_free_port()}"
        config.write_text(REGISTRY_CONFIG.format(storage=storage, addr=addr))
        with log.open("ab") as out:
            proc = subprocess.Popen([exe, "serve", str(config)], stdout=out, stderr=subprocess.STDOUT)
        server = Server("registry (docker-registry)", f"http://{addr}", proc, log)
        try:
            _wait_ready(server, server.url + "/v2/", timeout)
        except UserError:
            stop(proc)
            if attempt + 1 == tries or "address already in use" not in log.read_text(errors="replace"):
                raise
            continue
        try:
            yield server
        finally:
            stop(proc)
        return


def registries_conf(path: Path, registry: str) -> Path:
    """Write a containers-registries.conf(5) that marks ``registry`` (host:port) insecure (plain HTTP) and has no
    unqualified-search registries, so a short image name never reaches a public registry. Use it with
    ``CONTAINERS_REGISTRIES_CONF=<path>`` (podman, skopeo, buildah)."""
    path.write_text(f'unqualified-search-registries = []\n\n[[registry]]\nlocation = "{registry}"\ninsecure = true\n')
    return path

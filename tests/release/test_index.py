# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The static package index a release publishes into (catch_tools.release.index), judged by pip itself.

A small real wheel is published, served on 127.0.0.1 by Python's http.server, and fetched by pip (with the machine's
pip configuration switched off, so only this index is asked). The oracle is pip: it must refuse a wheel whose bytes
changed after publishing with its hash error, accept the same tampered wheel when the pages carry no ``#sha256=``
fragments (what the fragments protect), and skip a file whose ``data-requires-python`` excludes the interpreter.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from catch_tools.errors import UserError
from catch_tools.release import index, servers, wheel_check

REPO_ROOT = Path(__file__).resolve().parents[2]
NAME = "catch_probe-1.0-py3-none-any.whl"


def make_wheel(path: Path, body: str) -> Path:
    """A valid wheel of project catch-probe 1.0 (Requires-Python >=3.10) whose module holds ``body``."""
    files = {
        "catch_probe.py": body.encode(),
        "catch_probe-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: catch-probe\nVersion: 1.0\n"
                                              b"Requires-Python: >=3.10\n",
        "catch_probe-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                           b"Tag: py3-none-any\n",
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("catch_probe-1.0.dist-info/RECORD,,")
    files["catch_probe-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def pip_download(index_url: str, dest: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--index-url", index_url,
                           "-d", str(dest), *extra, "catch-probe==1.0"], capture_output=True, text=True, env=env,
                          timeout=300, check=False)


@pytest.fixture
def published(tmp_path: Path):
    """(index root, index URL, published sha256): the probe wheel published and served on 127.0.0.1."""
    root = tmp_path / "index"
    entry = index.publish(make_wheel(tmp_path / "dist" / NAME, "VALUE = 'published'\n"), root)
    with servers.static_http(root, tmp_path / "http.log") as web:
        yield root, f"{web.url}/simple/", entry.sha256


def tamper(root: Path) -> str:
    """Replace the published file with another valid wheel of the same name (as a compromised mirror would)."""
    wheel = make_wheel(root / "files" / NAME, "VALUE = 'tampered'\n")
    return wheel_check.sha256_file(wheel)


def test_pages_carry_sha256_and_requires_python(published, tmp_path: Path) -> None:
    root, url, sha = published
    page = (root / "simple" / "catch-probe" / "index.html").read_text()
    assert f"#sha256={sha}" in page and 'data-requires-python="&gt;=3.10"' in page
    assert sha == hashlib.sha256((tmp_path / "dist" / NAME).read_bytes()).hexdigest()
    got = pip_download(url, tmp_path / "got")
    assert got.returncode == 0, got.stderr
    assert wheel_check.sha256_file(tmp_path / "got" / NAME) == sha


def test_tampered_wheel_is_refused_with_the_hash_error(published, tmp_path: Path) -> None:
    root, url, sha = published
    bad = tamper(root)
    got = pip_download(url, tmp_path / "got")
    assert got.returncode != 0
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in got.stderr, got.stderr
    assert f"Expected sha256 {sha}" in got.stderr and bad in got.stderr
    assert not (tmp_path / "got" / NAME).exists()


def test_without_the_fragments_the_tampered_wheel_gets_in(published, tmp_path: Path) -> None:
    """What the previous test proves hangs on the fragments: without them pip takes the tampered bytes."""
    root, url, _sha = published
    bad = tamper(root)
    index.write_pages(root, hashes=False)
    assert "#sha256=" not in (root / "simple" / "catch-probe" / "index.html").read_text()
    got = pip_download(url, tmp_path / "got")
    assert got.returncode == 0, got.stderr
    assert wheel_check.sha256_file(tmp_path / "got" / NAME) == bad


def test_requires_python_is_read_from_the_page(published, tmp_path: Path) -> None:
    _root, url, _sha = published
    got = pip_download(url, tmp_path / "got", "--python-version", "3.9", "--only-binary=:all:")
    assert got.returncode != 0
    assert "Requires-Python >=3.10" in got.stderr, got.stderr  # pip's link-level skip (data-requires-python)


def test_a_published_file_never_changes(tmp_path: Path) -> None:
    root = tmp_path / "index"
    wheel = make_wheel(tmp_path / "a" / NAME, "VALUE = 1\n")
    first = index.publish(wheel, root)
    assert index.publish(wheel, root) == first  # the same bytes again: nothing changes
    with pytest.raises(UserError, match="already published with other bytes"):
        index.publish(make_wheel(tmp_path / "b" / NAME, "VALUE = 2\n"), root)
    assert wheel_check.sha256_file(root / "files" / NAME) == first.sha256


def test_cli_bad_input_is_one_line(tmp_path: Path) -> None:
    bogus = tmp_path / "torch-1.0-py3-none-any.whl"
    bogus.write_text("not a zip")
    proc = subprocess.run([sys.executable, REPO_ROOT / "scripts/publish_index.py", bogus, "--index-dir",
                           tmp_path / "idx"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {bogus}: cannot read the wheel") and proc.stderr.count("\n") == 1
    assert not (tmp_path / "idx").exists()

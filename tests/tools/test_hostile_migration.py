# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``scripts/torch_gpu2mlu.py`` given careless and hostile arguments: it never writes into its input unless
``--inplace`` (symlinks resolved), and in place never outside it; refuses FIFOs and sockets before reading anything,
names the line of a source that does not decode, leaves no half-written output, never replaces a launcher that is not
its own nor runs a file name as code, keeps every message on one line, and runs without the backend built.

Every case runs the script in a fresh interpreter, as a user does; a refused run must print one line, exit 2 and leave
the whole temporary directory as it was (a digest of every file, link and directory, taken before and after). The
cases that convert need libcst (the ``migration`` extra); the refusals are checked before libcst is needed.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hostile import tree_checksum

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "torch_gpu2mlu.py"
CUDA_SOURCE = "import torch\nx = torch.ones(1).cuda()\n"
#: Makes torch, torch_mlu (and with NO_LIBCST libcst) unimportable, then runs the script: the backend not installed.
NOT_INSTALLED = ("import runpy, sys; sys.modules['torch'] = None; sys.modules['torch_mlu'] = None; {extra}"
                 "sys.argv = [{script!r}] + sys.argv[1:]; runpy.run_path({script!r}, run_name='__main__')")
NO_LIBCST = "sys.modules['libcst'] = None; "


def gpu2mlu(*args: str | Path, cwd: Path, code: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the script (or ``python -c code`` with the same arguments) in ``cwd``. The timeout only ends a run that
    blocks (a FIFO read); no assertion depends on how long a run takes."""
    command = [sys.executable, str(SCRIPT)] if code is None else [sys.executable, "-c", code]
    return subprocess.run([*command, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120,
                          check=False)




def assert_refused(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 2 with one line ``error: ...`` holding every needle, no traceback, nothing on stdout."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``tmp_path/src`` with CUDA code (``train.py``), a plain module in ``pkg/`` and a non-Python file."""
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "train.py").write_text(CUDA_SOURCE)
    (src / "pkg" / "util.py").write_text("print('no accelerator here')\n")
    (src / "README.md").write_text("notes\n")
    return src


# -- the output never lands in the input -------------------------------------------------------------------------

def _alias(tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(tmp_path / "src")


def _link_in_output(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "train.py").symlink_to(tmp_path / "src" / "train.py")


@pytest.mark.parametrize(
    ("setup", "args", "needles"),
    [
        # a file input, its own directory as the output: the conversion would replace the CUDA original
        (None, ["-i", "src/train.py", "-o", "src", "--force"],
         ["src/train.py: the output would overwrite the input file src/train.py", "--inplace"]),
        (_alias, ["-i", "src/train.py", "-o", "alias", "--force"], ["alias/train.py: ", "overwrite the input file"]),
        # an existing output whose train.py is a symlink to the input's
        (_link_in_output, ["-i", "src", "-o", "out", "--force"], ["out/train.py: ", "write into the input tree src"]),
    ],
    ids=["file-into-its-dir", "file-into-symlinked-dir", "symlink-in-output"],
)
def test_output_never_lands_in_the_input(project: Path, setup, args: list[str], needles: list[str]) -> None:
    tmp = project.parent
    if setup is not None:
        setup(tmp)
    before = tree_checksum(tmp)
    assert_refused(gpu2mlu(*args, cwd=tmp), *needles)
    assert tree_checksum(tmp) == before


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["-i", "src", "--report-dir", "src/reports"], ["src/reports: report directory is inside the input tree src"]),
        (["-i", "src", "--report-dir", "src"], ["src: report directory is inside the input tree src"]),
        (["-i", "src", "--report-dir", "alias/reports"], ["alias/reports: report directory is inside the input"]),
        (["-i", "src/train.py", "--report-dir", "links"],
         ["links/change_list.csv: a report would overwrite the input file src/train.py"]),
    ],
    ids=["inside", "equal", "through-symlink", "report-file-is-a-link-to-the-input"],
)
def test_reports_never_land_in_the_input(project: Path, args: list[str], needles: list[str]) -> None:
    tmp = project.parent
    (tmp / "alias").symlink_to(project)
    (tmp / "links").mkdir()
    (tmp / "links" / "change_list.csv").symlink_to(project / "train.py")
    before = tree_checksum(tmp)
    assert_refused(gpu2mlu(*args, cwd=tmp), *needles)
    assert tree_checksum(tmp) == before


def test_input_inside_the_output_is_refused_only_where_a_file_lands_in_it(project: Path) -> None:
    """``-i src/pkg -o src``: ``pkg/pkg/util.py`` would be written as ``src/pkg/util.py``, an input file, so the
    run is refused; once that directory is renamed, nothing lands in the input and the run converts."""
    tmp = project.parent
    (project / "pkg" / "pkg").mkdir()
    (project / "pkg" / "pkg" / "util.py").write_text("import torch\ntorch.cuda.init()\n")
    before = tree_checksum(tmp)
    assert_refused(gpu2mlu("-i", "src/pkg", "-o", "src", "--force", cwd=tmp),
                   "src/pkg/util.py: the output would write into the input tree src/pkg")
    assert tree_checksum(tmp) == before
    pytest.importorskip("libcst")
    (project / "pkg" / "pkg").rename(project / "pkg" / "sub")
    inputs = tree_checksum(project / "pkg")
    proc = gpu2mlu("-i", "src/pkg", "-o", "src", "--force", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    assert tree_checksum(project / "pkg") == inputs
    assert (project / "sub" / "util.py").read_text().endswith("torch.mlu.init()\n")


# -- output and report directories that are files ----------------------------------------------------------------

@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-o", "out", "--report-dir", "notes.txt"], "notes.txt: report directory is a regular file, not a directory"),
        (["-o", "notes.txt/sub"], "notes.txt/sub: output directory cannot be created: notes.txt is a regular file"),
        (["-o", "out", "--report-dir", "notes.txt/r"], "notes.txt/r: report directory cannot be created: notes.txt"),
    ],
    ids=["report-dir", "output-below-a-file", "report-dir-below-a-file"],
)
def test_output_or_report_dir_that_is_a_file(project: Path, args: list[str], needle: str) -> None:
    tmp = project.parent
    (tmp / "notes.txt").write_text("mine\n")
    before = tree_checksum(tmp)
    assert_refused(gpu2mlu("-i", "src", *args, cwd=tmp), needle)
    assert tree_checksum(tmp) == before


# -- FIFOs, sockets: refused before anything is read or written --------------------------------------------------

@contextmanager
def _socket_at(path: Path) -> Iterator[None]:
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
        yield
    finally:
        sock.close()


@pytest.mark.parametrize("where", ["in-tree", "symlink-in-tree", "as-input"])
def test_fifo_is_refused_up_front(project: Path, where: str) -> None:
    tmp = project.parent
    if where == "in-tree":
        os.mkfifo(project / "pkg" / "data.txt")
        args, named = ["-i", "src", "-o", "out"], "src/pkg/data.txt: a FIFO, not a regular file"
    elif where == "symlink-in-tree":
        os.mkfifo(tmp / "fifo")
        (project / "feed.py").symlink_to(tmp / "fifo")
        args, named = ["-i", "src", "-o", "out"], "src/feed.py: a FIFO, not a regular file"
    else:
        os.mkfifo(tmp / "stream.py")
        args, named = ["-i", "stream.py"], "stream.py: input is a FIFO, not a .py file or a directory"
    before = tree_checksum(tmp)
    assert_refused(gpu2mlu(*args, cwd=tmp), named)
    assert tree_checksum(tmp) == before  # no partial out/, no reports


def test_socket_in_the_tree_is_refused(project: Path) -> None:
    tmp = project.parent
    with _socket_at(project / "s.sock"):
        before = tree_checksum(tmp)
        assert_refused(gpu2mlu("-i", "src", cwd=tmp), "src/s.sock: a socket, not a regular file")
        assert tree_checksum(tmp) == before


# -- a failed run leaves nothing half-written --------------------------------------------------------------------

def test_failed_run_leaves_the_existing_output_as_it_was(project: Path) -> None:
    """``out/train.py`` is a directory: the run fails after converting, before anything reaches ``out``."""
    pytest.importorskip("libcst")
    tmp = project.parent
    (project / "a.py").write_text(CUDA_SOURCE)  # converted (and, written as it went, written) before train.py
    (tmp / "out" / "train.py").mkdir(parents=True)
    (tmp / "out" / "keep.txt").write_text("mine\n")
    before = tree_checksum(tmp)
    assert_refused(gpu2mlu("-i", "src", "-o", "out", "--force", cwd=tmp),
                   "out/train.py: cannot replace it with a file: it is a directory")
    assert tree_checksum(tmp) == before  # no out/a.py, no out_report, no staging directory left


def test_report_clash_leaves_no_output(project: Path) -> None:
    """Every staged directory is checked before any is moved: a report clash leaves no ``out/`` either."""
    pytest.importorskip("libcst")
    tmp = project.parent
    (tmp / "rep" / "change_list.csv").mkdir(parents=True)
    before = tree_checksum(tmp)
    assert_refused(gpu2mlu("-i", "src", "-o", "out", "--report-dir", "rep", cwd=tmp),
                   "rep/change_list.csv: cannot replace it with a file")
    assert tree_checksum(tmp) == before


# -- sources that do not decode: the line, not a byte offset -----------------------------------------------------

def test_undecodable_source_names_its_line(project: Path) -> None:
    pytest.importorskip("libcst")
    tmp = project.parent
    (project / "cuda_latin.py").write_bytes(b"import torch\n\nname = '\xff'\ntorch.cuda.synchronize()\n")
    (project / "plain_latin.py").write_bytes(b"x = 1\ny = 2\n\nz = '\xe9t\xe9'\n")
    (project / "ascii_cookie.py").write_bytes(b"# coding: ascii\nimport torch\nx = '\xc3\xa9'\ntorch.cuda.init()\n")
    (project / "bom.py").write_bytes(b"\xef\xbb\xbfimport torch\ntorch.cuda.init()\ns = '\xfe'\n")
    before = tree_checksum(project)
    proc = gpu2mlu("-i", "src", "-o", "out", cwd=tmp)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines() == [
        "error: ascii_cookie.py:3: skipped-malformed: cannot decode as ascii: byte 0xc3 (ordinal not in range(128))",
        "error: bom.py:3: skipped-malformed: cannot decode as utf-8: byte 0xfe (invalid start byte)",
        "error: cuda_latin.py:3: skipped-malformed: cannot decode as utf-8: byte 0xff (invalid start byte)",
        "error: plain_latin.py:4: skipped-malformed: cannot decode as utf-8: byte 0xe9 (invalid continuation byte)",
    ]
    log = (tmp / "out_report" / "torch_gpu2mlu.log").read_text()
    assert "WARNING cuda_latin.py:3: skipped-malformed: cannot decode as utf-8: byte 0xff" in log
    assert tree_checksum(project) == before
    assert (tmp / "out" / "cuda_latin.py").read_bytes() == (project / "cuda_latin.py").read_bytes()  # copied as is


# -- without the backend -----------------------------------------------------------------------------------------

def test_help_without_torch_or_the_backend(tmp_path: Path) -> None:
    proc = gpu2mlu("--help", cwd=tmp_path, code=NOT_INSTALLED.format(extra=NO_LIBCST, script=str(SCRIPT)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: torch_gpu2mlu") and "--inplace" in proc.stdout and proc.stderr == ""


def test_run_without_libcst_is_one_line(project: Path) -> None:
    tmp = project.parent
    before = tree_checksum(tmp)
    proc = gpu2mlu("-i", "src", cwd=tmp, code=NOT_INSTALLED.format(extra=NO_LIBCST, script=str(SCRIPT)))
    assert_refused(proc, "torch_gpu2mlu needs libcst: pip install")
    assert tree_checksum(tmp) == before


def test_run_without_torch_or_the_backend(project: Path) -> None:
    """The converter is pure Python: with libcst, a run needs neither torch nor a built torch_mlu."""
    pytest.importorskip("libcst")
    tmp = project.parent
    proc = gpu2mlu("-i", "src", cwd=tmp, code=NOT_INSTALLED.format(extra="", script=str(SCRIPT)))
    assert proc.returncode == 0, proc.stderr
    assert (tmp / "src_mlu" / "train.py").read_text().endswith("x = torch.ones(1).mlu()\n")
    assert (tmp / "src_mlu_report" / "change_list.csv").is_file()


# -- staging directories: known by identity, never by name; errors name the user's paths -------------------------

def test_user_directory_named_like_staging_is_converted(project: Path) -> None:
    """A run's own staging directories are left out of the walk by path, so a user's directory named like them is
    input like any other: converted out of place, and in place also when the reports are staged inside the input."""
    pytest.importorskip("libcst")
    tmp = project.parent
    (project / ".torch_gpu2mlu-notes").mkdir()
    (project / ".torch_gpu2mlu-notes" / "k.py").write_text(CUDA_SOURCE)
    proc = gpu2mlu("-i", "src", "-o", "out", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    assert (tmp / "out" / ".torch_gpu2mlu-notes" / "k.py").read_text().endswith("x = torch.ones(1).mlu()\n")
    assert "2 converted, 1 unchanged, 1 copied" in proc.stdout
    proc = gpu2mlu("-i", "src", "--inplace", "--report-dir", "src/reports", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    assert (project / ".torch_gpu2mlu-notes" / "k.py").read_text().endswith("x = torch.ones(1).mlu()\n")
    log = (project / "reports" / "torch_gpu2mlu.log").read_text().splitlines()
    assert sorted(line.split(":")[0] for line in log) == [
        "INFO .torch_gpu2mlu-notes/k.py", "INFO README.md", "INFO pkg/util.py", "INFO summary", "INFO train.py"]
    assert sorted(p.name for p in project.iterdir()) == [".torch_gpu2mlu-notes", "README.md", "pkg", "reports",
                                                          "train.py"]


@pytest.fixture
def unwritable_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory nothing can be created in: a read-only one, or for root (who ignores modes) ``/sys``."""
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        yield ro
        ro.chmod(0o755)
        return
    try:
        os.mkdir("/sys/.torch_gpu2mlu-probe")
    except OSError:
        yield Path("/sys")
        return
    os.rmdir("/sys/.torch_gpu2mlu-probe")
    pytest.skip("no directory here refuses root's writes")


def test_unwritable_output_parent_names_the_output(project: Path, unwritable_dir: Path) -> None:
    tmp = project.parent
    before = tree_checksum(tmp)
    assert_refused(gpu2mlu("-i", "src", "-o", unwritable_dir / "x", cwd=tmp),
                   f"error: {unwritable_dir / 'x'}: cannot write")
    assert tree_checksum(tmp) == before


# -- --inplace: only the input's own files -----------------------------------------------------------------------

def test_inplace_never_writes_through_a_symlink_out_of_the_input(project: Path) -> None:
    """``src/shared.py`` links to a CUDA file outside ``src``: the run is refused before anything is rewritten (the
    reports neither); a link to a file in the tree converts that file, and one out of it with nothing to change is
    read like any file."""
    pytest.importorskip("libcst")
    tmp = project.parent
    (tmp / "outside.py").write_text(CUDA_SOURCE)
    (project / "shared.py").symlink_to(tmp / "outside.py")
    before = tree_checksum(tmp)
    assert_refused(gpu2mlu("-i", "src", "--inplace", cwd=tmp),
                   f"src/shared.py: a symlink to {tmp / 'outside.py'}, outside the input src: --inplace never writes")
    assert tree_checksum(tmp) == before
    (tmp / "outside.py").write_text("print('nothing to convert')\n")
    (project / "inside.py").symlink_to("train.py")
    outside = tree_checksum(tmp, exclude=("src",))
    proc = gpu2mlu("-i", "src", "--inplace", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    assert (project / "train.py").read_text().endswith("x = torch.ones(1).mlu()\n")
    assert (project / "inside.py").is_symlink() and (project / "shared.py").is_symlink()
    assert tree_checksum(tmp, exclude=("src", "src_mlu_report")) == outside


# -- the distributed launcher never replaces a file that is not ours ---------------------------------------------

DISTRIBUTED_SOURCE = ("import torch\nimport torch.distributed as dist\n\n\ndef main():\n"
                      "    dist.init_process_group('nccl')\n    torch.zeros(1).cuda()\n\n\n"
                      "if __name__ == '__main__':\n    main()\n")
USER_LAUNCHER = "#!/bin/sh\necho my own launcher\n"


@pytest.mark.parametrize("where", ["output", "inplace", "inplace-symlink-out"])
def test_launcher_never_replaces_the_users_file(project: Path, where: str) -> None:
    """The input's own ``run_distributed_mlu.sh`` (a file, or a symlink out of the tree) stays as it was, in the
    output and in place; the launcher is written beside it under a free name, which the run prints."""
    pytest.importorskip("libcst")
    tmp = project.parent
    (project / "train.py").write_text(DISTRIBUTED_SOURCE)
    mine = project / "run_distributed_mlu.sh"
    if where == "inplace-symlink-out":
        (tmp / "elsewhere.sh").write_text(USER_LAUNCHER)
        mine.symlink_to(tmp / "elsewhere.sh")
    else:
        mine.write_text(USER_LAUNCHER)
    before = tree_checksum(tmp, exclude=("src",))
    args = ["-o", "out"] if where == "output" else ["--inplace"]
    proc = gpu2mlu("-i", "src", *args, cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    top = tmp / "out" if where == "output" else project
    assert (top / "run_distributed_mlu.sh").read_text() == USER_LAUNCHER
    assert (top / "run_distributed_mlu-2.sh").read_text().startswith("#!/usr/bin/env bash\n# Generated by ")
    assert os.access(top / "run_distributed_mlu-2.sh", os.X_OK)
    assert (f"distributed launcher: {top.name}/run_distributed_mlu-2.sh ({top.name}/run_distributed_mlu.sh is not "
            "ours: kept)") in proc.stdout
    assert "2 copied" in proc.stdout  # README.md and the user's file, which the output (or the input) holds
    if where == "inplace-symlink-out":
        assert mine.is_symlink()
    assert tree_checksum(tmp, exclude=("src", "out", "src_mlu_report", "out_report")) == before


def test_launcher_takes_the_next_free_name_and_keeps_its_own(project: Path) -> None:
    """``run_distributed_mlu-2.sh`` taken as well: ``-3``. A rerun in place finds its own launcher (same text) and
    keeps it, rather than adding another."""
    pytest.importorskip("libcst")
    tmp = project.parent
    (project / "train.py").write_text(DISTRIBUTED_SOURCE)
    (project / "run_distributed_mlu.sh").write_text(USER_LAUNCHER)
    (project / "run_distributed_mlu-2.sh").mkdir()
    (project / "run_distributed_mlu-2.sh" / "notes.txt").write_text("mine\n")
    proc = gpu2mlu("-i", "src", "-o", "out", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    assert "distributed launcher: out/run_distributed_mlu-3.sh" in proc.stdout
    assert (tmp / "out" / "run_distributed_mlu.sh").read_text() == USER_LAUNCHER
    (project / "run_distributed_mlu.sh").unlink()
    shutil.rmtree(project / "run_distributed_mlu-2.sh")
    for _ in range(2):
        (project / "train.py").write_text(DISTRIBUTED_SOURCE)  # the same distributed code to convert each time
        proc = gpu2mlu("-i", "src", "--inplace", cwd=tmp)
        assert proc.returncode == 0, proc.stderr
    assert "distributed launcher: src/run_distributed_mlu.sh\n" in proc.stdout
    assert sorted(p.name for p in project.glob("run_distributed_mlu*")) == ["run_distributed_mlu.sh"]


def test_launcher_runs_no_file_name_as_code(project: Path) -> None:
    """The launcher names the input's files: ``$(touch pwned).py`` stays a name when the launcher runs (a stand-in
    ``python`` on PATH shows what it was given), and a name with a newline does not end its comment line."""
    pytest.importorskip("libcst")
    tmp = project.parent
    (project / "train.py").unlink()
    (project / "$(touch pwned).py").write_text(DISTRIBUTED_SOURCE)
    (project / "two\nlines.py").write_text(DISTRIBUTED_SOURCE.replace("if __name__", "if False"))
    proc = gpu2mlu("-i", "src", "-o", "out", cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    launcher = tmp / "out" / "run_distributed_mlu.sh"
    assert "\nlines.py" not in launcher.read_text()
    (tmp / "bin").mkdir()
    (tmp / "bin" / "python").write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_OUT"\n')
    (tmp / "bin" / "python").chmod(0o755)
    env = {"PATH": f"{tmp / 'bin'}:/usr/bin:/bin", "NPROC": "1", "ARGS_OUT": str(tmp / "args.txt")}
    run = subprocess.run(["bash", str(launcher)], cwd=tmp, env=env, capture_output=True, text=True, timeout=60,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert (tmp / "args.txt").read_text().splitlines()[-1] == "$(touch pwned).py"
    assert not list(tmp.rglob("pwned"))


# -- names that are not printable: quoted, one line each ---------------------------------------------------------

def test_unprintable_file_names_are_quoted_on_one_line(project: Path) -> None:
    """A malformed file named with a newline is one quoted ``error:`` line and one log line; a name whose bytes are
    not UTF-8 is converted and reported (quoted), not a traceback when the reports are written."""
    pytest.importorskip("libcst")
    tmp = project.parent
    (project / "bad\nname.py").write_text("def (\n")
    with open(os.path.join(os.fsencode(project), b"caf\xe9.py"), "wb") as f:
        f.write(CUDA_SOURCE.encode())
    proc = gpu2mlu("-i", "src", "-o", "out", cwd=tmp)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == ["error: 'bad\\nname.py':1: skipped-malformed: not valid Python: invalid syntax"]
    log = (tmp / "out_report" / "torch_gpu2mlu.log").read_text(encoding="utf-8").splitlines()
    assert "WARNING 'bad\\nname.py':1: skipped-malformed: not valid Python: invalid syntax" in log
    assert "INFO 'caf\\udce9.py': converted: 2 changes" in log
    assert all(line.startswith(("INFO ", "WARNING ")) for line in log)
    changes = (tmp / "out_report" / "change_list.csv").read_text(encoding="utf-8")
    assert "'caf\\udce9.py',2," in changes
    assert os.path.exists(os.path.join(os.fsencode(tmp / "out"), b"caf\xe9.py"))


def test_refusal_quotes_an_unprintable_name(project: Path) -> None:
    tmp = project.parent
    os.mkfifo(project / "feed\nme.txt")
    before = tree_checksum(tmp)
    assert_refused(gpu2mlu("-i", "src", "-o", "out", cwd=tmp), "error: 'src/feed\\nme.txt': a FIFO, not a regular file")
    assert tree_checksum(tmp) == before

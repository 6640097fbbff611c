# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The torch.backends entry point: ``import torch`` alone makes torch.mlu available; TORCH_DEVICE_BACKEND_AUTOLOAD=0
turns it off (PyTorch 2.13 ``torch._import_device_backends``)."""

from __future__ import annotations

from importlib.metadata import entry_points

from mlu_helpers import run_python


def test_entry_point_declared():
    eps = {ep.name: ep.value for ep in entry_points(group="torch.backends")}
    assert eps.get("mlu") == "torch_mlu:_autoload"


def test_import_torch_autoloads():
    out = run_python("import torch; print(torch.mlu.device_count(), torch.ones(2, device='mlu').device)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "mlu:0"]


def test_autoload_disabled():
    code = (
        "import torch\n"
        "print(hasattr(torch, 'mlu'), torch._C._get_privateuse1_backend_name())\n"
        "import torch_mlu\n"  # explicit import still works
        "print(torch.mlu.device_count())\n"
    )
    out = run_python(code, env={"TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "privateuseone", "2"]


def test_version_follows_the_pin():
    import tomllib

    from mlu_helpers import REPO

    import torch_mlu

    manifest = tomllib.loads((REPO / "patches" / "manifest.toml").read_text())
    base = manifest["upstream"]["wheel_version"].split("+")[0]
    assert torch_mlu.__version__ == f"{base}+catch{manifest['series']['version']}"


def test_import_backend_before_torch():
    # torch_mlu's own `import torch` runs the autoload while torch_mlu is still initializing.
    out = run_python("import torch_mlu\nimport torch\nprint(torch.mlu.device_count(), torch_mlu.__version__ != '')")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "True"]

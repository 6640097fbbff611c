#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# The README's main job, from a fresh clone: set up, apply and check the series, build the combined wheel, check its
# native interfaces against upstream, install it into a fresh virtual environment and train the digits CNN on `mlu`.
#
#   bash scripts/quickstart.sh            # all five steps
#   PYTHON=python3.11 bash scripts/quickstart.sh
#
# Uses .venv/ (tooling + pinned torch), .venv-run/ (made anew: only the combined wheel), dist/ (the wheel) and the
# download cache ${CATCH_CACHE:-~/.cache/catch}. Every pip install is constrained by constraints.txt (torch==2.13.0).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
py=${PYTHON:-python3}
export PIP_CONSTRAINT="$root/constraints.txt"
export PIP_DISABLE_PIP_VERSION_CHECK=1
cache=${CATCH_CACHE:-$HOME/.cache/catch}
step() { printf '\n== %s\n' "$*"; }

step "1/5 tooling environment .venv (pinned torch==2.13.0)"
if [ -e .venv ] && [ ! -d .venv ]; then
  # A PEP 832 redirect file, as tox >= 4.67 writes for the env it ran (tox.ini turns that off for this project).
  echo "error: .venv is a file ($(head -c 200 .venv | tr -d '\n')), not the tooling environment; remove it and rerun" >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$py" -m venv .venv
tool=.venv/bin/python
# numpy: torch warns "Failed to initialize NumPy" at import without it (the interface check imports torch too)
$tool -m pip install --quiet torch==2.13.0 numpy -e "$root" scikit-build-core cmake ninja
$tool -c 'import torch; print("upstream torch", torch.__version__, torch.version.git_version)'

step "2/5 series: lint, check and apply on the real v2.13.0 tree"
$tool scripts/apply_patches.py lint
tree=$($tool scripts/upstream.py checkout "$cache/work/pytorch-pinned")
$tool scripts/apply_patches.py check --source "$tree"
$tool scripts/apply_patches.py apply --source "$tree"
$tool scripts/apply_patches.py status --source "$tree"

step "3/5 combined wheel (overlay build: upstream wheel + series + torch_mlu)"
upstream=$($tool scripts/upstream.py wheel)
# -v: the backend's compile steps ([n/N] from ninja) show as they run even without a terminal (piped to tee, CI);
# on a terminal they are the live progress line
$tool scripts/build_wheel.py -v --upstream-wheel "$upstream" --out dist
wheel=$(ls -t dist/torch-*catch*.whl | head -n 1)
echo "built $wheel"

step "4/5 native interface check: $(basename "$upstream") -> $(basename "$wheel")"
$tool scripts/check_native_interfaces.py "$upstream" "$wheel" --accept patches/interfaces-reviewed.toml

step "5/5 fresh environment .venv-run with only the combined wheel; train on mlu"
rm -rf .venv-run
"$py" -m venv .venv-run
.venv-run/bin/python -m pip install --quiet "$wheel" numpy scikit-learn
(cd /tmp && "$root/.venv-run/bin/python" -c 'import torch; print("installed torch", torch.__version__, "catch", torch.version.catch, "mlu devices", torch.mlu.device_count())')
.venv-run/bin/python examples/train_digits.py --device mlu

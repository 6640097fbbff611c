#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# Runs INSIDE the dev image build (docker/Dockerfile.dev), from the project copied to /opt/catch:
# toolchain, the pinned torch, the tooling and test tools, the series applied to the real upstream tree, and Catch
# built in editable mode. Not meant for a developer's machine (use scripts/quickstart.sh there).
#
# Inputs (set by the Dockerfile): CATCH_CACHE (download cache, seeded with the pinned CPU torch wheel staged in
# docker/context/wheels by docker/build_images.sh), PIP_CONSTRAINT (constraints.txt: torch==2.13.0), VIRTUAL_ENV.
set -euo pipefail
cd /opt/catch
step() { printf '\n== dev image: %s\n' "$*"; }

step "toolchain (compilers, CMake, ninja, git)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends g++ make cmake ninja-build git > /dev/null
apt-get clean
rm -rf /var/lib/apt/lists/*

step "virtual environment $VIRTUAL_ENV with the pinned torch, the tooling and the test tools"
python3 -m venv "$VIRTUAL_ENV"
# The staged wheel doubles as the download cache of scripts/upstream.py (no second copy in the image).
mkdir -p "$CATCH_CACHE"
ln -sfn /opt/catch/docker/context/wheels "$CATCH_CACHE/wheels"
pip install --quiet --find-links "$CATCH_CACHE/wheels" torch==2.13.0 -e '.[test,lint]' tox \
    'scikit-build-core>=0.10' numpy scikit-learn expecttest
python -c 'import torch; print("torch", torch.__version__, torch.version.git_version)'

step "series applied to the real upstream tree at the pin"
python scripts/apply_patches.py lint
if [ -e pytorch/.git ]; then
    tree=/opt/catch/pytorch          # a full clone of PyTorch in the build context (submodule initialised)
else
    tree=$(python scripts/upstream.py checkout /opt/pytorch)
fi
python scripts/apply_patches.py check --source "$tree"
python scripts/apply_patches.py apply --source "$tree"
python scripts/apply_patches.py status --source "$tree"

step "Catch backend (torch_mlu), editable"
pip install --quiet --no-build-isolation --no-deps -e ./catch
rm -rf /root/.cache/pip

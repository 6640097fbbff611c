#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# Runs INSIDE the release image build (docker/Dockerfile): make the virtual environment and install exactly one
# combined wheel (CTX/dist/torch-<version>+<local>.catch<N>-*.whl) and its dependencies from PyPI, constrained by
# constraints.txt (torch==2.13.0) so no other torch can be pulled.
#
#   bash install_release.sh CTX       # CTX: the bind-mounted build context
set -euo pipefail
ctx=$1
shopt -s nullglob
wheels=("$ctx"/dist/torch-*catch*.whl)
if [ ${#wheels[@]} -ne 1 ]; then
    echo "error: dist/: expected exactly one combined wheel torch-*catch*.whl, found ${#wheels[@]}" \
         "(build it with scripts/build_wheel.py; remove old ones)" >&2
    exit 2
fi
python3 -m venv "$VIRTUAL_ENV"
PIP_CONSTRAINT="$ctx/constraints.txt" pip install --quiet "${wheels[0]}"
pip list --format=freeze | grep -i '^torch' || true

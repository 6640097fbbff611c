# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sphinx configuration of the Catch docs: Markdown (MyST) pages, the API guide from docstrings (autodoc), and the
version matrix generated from ``patches/manifest.toml`` at build time (``_ext/catch_docs.py``).

Offline by design: no intersphinx, no remote images or themes; the build needs only the packages of the ``docs``
tox env and the installed ``torch`` + ``torch_mlu`` (autodoc imports them). Build: ``sphinx-build -W --keep-going -b
html docs docs/_build/html``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(ROOT / "src"))
# autodoc imports torch_mlu explicitly; keep torch's autoload from importing it a second way first.
os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

project = "Catch"
author = "Catch Developers"
copyright = "2026, Catch Developers"  # noqa: A001  (Sphinx's config name)

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "catch_docs",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options: dict[str, object] = {}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# Dataclass fields listed under "Attributes:" are documented by autodoc already: render the section as fields.
napoleon_use_ivar = True

html_theme = "alabaster"
html_title = "Catch: PyTorch for Cambricon MLU"
html_static_path: list[str] = []

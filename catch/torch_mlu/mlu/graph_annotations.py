# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.mlu.graph_annotations``: ``torch.cuda.graph_annotations`` (new in torch 2.14) for mlu graphs.

On CUDA, :func:`mark_kernels` tags the kernels captured in a CUDA graph with user metadata keyed by the CUPTI graph
node ids, and "when unavailable, recording silently degrades to a no-op; use :func:`is_available` to check support"
(torch/cuda/graph_annotations.py). Captured mlu work has no CUPTI graph node ids, so here it is always unavailable:
:func:`is_available` is False, :func:`mark_kernels` is a no-op scope and there are no annotations, as on a CUDA
machine without ``cudaGraphNodeGetToolsId``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["clear_kernel_annotations", "dump_kernel_py_stacks", "get_kernel_annotations", "get_kernel_py_stacks",
           "is_available", "mark_kernels"]


def is_available() -> bool:
    """False: captured mlu work has no graph node ids to annotate."""
    return False


@contextlib.contextmanager
def mark_kernels(annotation: str | dict[str, Any], *, backward: bool = True) -> Iterator[None]:
    """A scope that would tag the kernels captured inside it with ``annotation``; a no-op on mlu, as upstream's when
    :func:`is_available` is False."""
    yield


def get_kernel_annotations() -> Mapping[int, list[Any]]:
    """The recorded annotations by graph node id: always empty on mlu."""
    return {}


def get_kernel_py_stacks() -> Mapping[int, str]:
    """The Python stacks recorded per graph node id: always empty on mlu."""
    return {}


def dump_kernel_py_stacks(path: str) -> None:
    """Write :func:`get_kernel_py_stacks` to ``path`` as gzip-compressed JSON, as upstream (an empty object on mlu)."""
    import gzip
    import json

    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump({str(k): v for k, v in get_kernel_py_stacks().items()}, f)


def clear_kernel_annotations() -> None:
    """Forget the recorded annotations (there are none on mlu)."""

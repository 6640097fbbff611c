# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The decomposition table of graph mode: which ATen ops are decomposed before fusion groups form and compile.

The backend traces Dynamo's graph to ATen graphs with it (:mod:`torch_mlu.compile.backend`), and each fusion group
hands it to Inductor again when it compiles (:mod:`torch_mlu.compile.group`).
"""

from __future__ import annotations

from typing import Any


def decompositions() -> dict[Any, Any]:
    """Inductor's decomposition table (``torch._inductor.decomposition.select_decomp_table``) without the ops that
    graph mode calls as kernels (:data:`torch_mlu.inductor.fallbacks.OPS`, where the reasons are); used for the ATen
    graphs and again when a fusion group compiles, whose post-grad pass hands these ops to the kernels
    (:mod:`torch_mlu.compile.kernels`)."""
    from torch._inductor.decomposition import select_decomp_table

    from torch_mlu.inductor.fallbacks import OPS

    return {op: fn for op, fn in select_decomp_table().items() if op not in OPS}

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""The decomposition table of graph mode: which ATen ops are decomposed before fusion groups form and compile.

The backend traces Dynamo's graph to ATen graphs with it (:mod:`torch_mlu.compile.backend`), and each fusion group
hands it to Inductor again when it compiles (:mod:`torch_mlu.compile.group`).
"""

from __future__ import annotations

from typing import Any

# Inductor decompositions whose generated CPU code is slower than the ATen kernel the group then calls instead:
# max_pool2d_with_indices_backward becomes a scatter_add over the pooled gradient (torch/_decomp/decompositions.py),
# which Inductor's C++ backend emits as a serial loop of indirect `+=` stores, several times slower than ATen's kernel
# (a tenth of the digits CNN's training step at 1 thread). Left undecomposed, the op is lowered by Inductor's own
# max_pool2d_with_indices_backward lowering (a parallel gather over each input's pooling windows).
# max_pool2d_with_indices becomes a window reduction into int8 offsets plus their conversion to int64 indices, emitted
# as a scalar loop with a bounds check and a floor division per element (the slowest kernel of the digits CNN's
# forward); left undecomposed, the post-grad pass hands it to Catch's kernel (torch_mlu.compile.kernels).
_SLOW_DECOMPOSITIONS = ("aten.max_pool2d_with_indices_backward.default", "aten.max_pool2d_with_indices.default")


def decompositions() -> dict[Any, Any]:
    """Inductor's decomposition table (``torch._inductor.decomposition.select_decomp_table``) without the entries in
    ``_SLOW_DECOMPOSITIONS``; used for the ATen graphs and again when a fusion group compiles."""
    from torch._inductor.decomposition import select_decomp_table

    return {op: fn for op, fn in select_decomp_table().items() if str(op) not in _SLOW_DECOMPOSITIONS}

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""``torch.compile`` of ``flex_attention`` on ``mlu``: Inductor's lowering of the op, routed to the CPU's C++ template.

Inductor lowers the ``flex_attention`` higher-order op by device type (``torch._inductor.kernel.flex``): ``cpu`` gets
the C++ template (``lower_cpu``), ``mps`` a Metal one, and every other device Triton's template, which mlu cannot run.
mlu kernels are the CPU's C++ (:mod:`torch_mlu.inductor.codegen`), so :func:`register` wraps the lowering: an mlu
query takes ``lower_cpu`` -- the template kernel then runs on host views of the mlu buffers like any other mlu
kernel -- and every other device the upstream lowering, unchanged.

The CPU template is inference-only: it writes the attention output, not the log-sum-exp nor the row maxima. Upstream
asks the kernel for the log-sum-exp whenever grad mode is on, except on CPU and MPS; on mlu the op's first output is
all an inference graph uses, so the request is dropped. A graph that uses another output (a training graph saves the
log-sum-exp for the backward; ``return_lse``, ``return_aux``) raises ``NotImplementedError``, as CPU does.
"""

from __future__ import annotations

import operator
from typing import Any

_MESSAGE = ("FlexAttention under torch.compile on mlu supports inference only (mlu lowers it with the CPU's C++ "
            "template): backward, return_lse and return_aux are not supported. Set requires_grad to False on the "
            "inputs, or call flex_attention eagerly.")


def _uses_auxiliary_outputs() -> bool:
    """Whether the graph node being lowered (the ``flex_attention`` op) has a user of an output other than the first."""
    from torch._inductor.virtualized import V

    node = getattr(V.graph, "current_node", None)
    if node is None:
        return False
    return any(user.target is not operator.getitem or user.args[1] != 0 for user in node.users)


def _lower_on_mlu(query: Any, key: Any, value: Any, subgraph: Any, block_mask: Any, scale: Any,
                  kernel_options: dict[str, Any], score_mod_other_buffers: Any, mask_mod_other_buffers: Any) -> Any:
    from torch._inductor.kernel.flex.flex_cpu import lower_cpu

    if kernel_options.get("OUTPUT_MAX") or _uses_auxiliary_outputs():
        raise NotImplementedError(_MESSAGE)
    options = dict(kernel_options, OUTPUT_LOGSUMEXP=False)
    return lower_cpu(query, key, value, subgraph, block_mask, scale, options, score_mod_other_buffers,
                     mask_mod_other_buffers)


def _raise_backward_on_mlu(original: Any) -> Any:
    def flex_attention_backward(*args: Any, **kwargs: Any) -> Any:
        if args and args[0].get_device().type == "mlu":
            raise NotImplementedError(_MESSAGE)
        return original(*args, **kwargs)

    flex_attention_backward._catch_mlu = True  # type: ignore[attr-defined]
    return flex_attention_backward


def register() -> None:
    """Routes Inductor's lowering of ``flex_attention`` on mlu to the CPU's C++ template; the backward's lowering
    raises ``NotImplementedError`` on mlu (idempotent; other devices keep the upstream lowerings)."""
    import torch
    import torch._inductor.kernel.flex.flex_attention  # noqa: F401  (registers the upstream lowerings)
    from torch._inductor.lowering import lowerings

    forward = torch.ops.higher_order.flex_attention
    original = lowerings[forward]
    if not getattr(original, "_catch_mlu", False):
        def flex_attention(*args: Any, **kwargs: Any) -> Any:
            if args and args[0].get_device().type == "mlu":
                return _lower_on_mlu(*args, **kwargs)
            return original(*args, **kwargs)

        flex_attention._catch_mlu = True  # type: ignore[attr-defined]
        lowerings[forward] = flex_attention

    backward = torch.ops.higher_order.flex_attention_backward
    if not getattr(lowerings.get(backward), "_catch_mlu", False):
        lowerings[backward] = _raise_backward_on_mlu(lowerings[backward])

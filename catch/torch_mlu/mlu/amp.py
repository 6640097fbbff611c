# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""AMP for mlu: ``torch.mlu.amp.autocast`` and ``GradScaler`` (``torch.cuda.amp`` analogues).

``torch.autocast("mlu", dtype=torch.float16 / torch.bfloat16)`` and ``torch.amp.GradScaler("mlu")`` work directly;
these are the device-specific spellings.
"""

from __future__ import annotations

import torch


class autocast(torch.amp.autocast_mode.autocast):
    """``torch.autocast("mlu", ...)``."""

    def __init__(self, enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True) -> None:
        super().__init__("mlu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(torch.amp.GradScaler):
    """``torch.amp.GradScaler("mlu", ...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        super().__init__("mlu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""``torch.mlu.sparse``: typed sparse COO tensor classes (``torch.cuda.sparse`` analogue), e.g.
``torch.mlu.sparse.FloatTensor(indices, values, size)``."""

from torch_mlu.mlu import _typed

_classes = _typed.make("torch.mlu.sparse", sparse=True)
globals().update(_classes)
__all__ = sorted(_classes)

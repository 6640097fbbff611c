# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""Opt-in helpers for moving CUDA code to mlu.

- ``import torch_mlu.contrib.transfer_to_mlu``: run an unchanged CUDA script on mlu (see that module).
- :mod:`torch_mlu.contrib.api_map`: the CUDA -> mlu API table (``api_map.csv``) shared with ``torch_gpu2mlu``.
- :mod:`torch_mlu.contrib.cuda_compat`: mlu meanings of ``torch.cuda`` names that ``torch.mlu`` does not spell.

Importing this package changes nothing; only importing ``transfer_to_mlu`` does.
"""

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause
"""``mlu`` for Dynamo and Inductor: what plain ``torch.compile(model)`` (the default Inductor backend) needs.

- :mod:`.lazy_registration`: ``torch.mlu``'s module ``__getattr__``, through which Inductor finds the code
  generators the first time it lowers a graph, registering them and the device interface then;
- :mod:`.device_interface`: Dynamo's device interface for mlu (``get_interface_for_device("mlu")``), which the
  fusion backend (:mod:`torch_mlu.compile`) registers too;
- :mod:`.codegen`: Inductor's code generators for mlu (CPU C++ kernels, a Python wrapper that calls them on host
  views of device memory);
- :mod:`.cpu_choices`: the choices Inductor makes for its C++ backend by asking whether a device is cpu, made for
  mlu too;
- :mod:`.fallbacks`: the ops Inductor calls as mlu kernels instead of generating code for them;
- :mod:`.runtime`: what the generated wrapper code calls when it runs.

Nothing is imported here, so that ``import torch_mlu`` does not import Inductor.
"""

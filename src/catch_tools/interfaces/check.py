# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The native interface check: run the selected layers on (upstream wheel, combined wheel) and build a report.

Layers (rules in each module): 0 :mod:`.files`, 1 :mod:`.elf` (+ runtime ABI facts from :mod:`.schemas`' probes),
2 :mod:`.schemas`, 3 :mod:`.pyapi`. Exit status: OR of the findings' bits (see :mod:`.report`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from catch_tools.interfaces.elf import check_elf
from catch_tools.interfaces.files import check_files
from catch_tools.interfaces.pair import WheelPair
from catch_tools.interfaces.pyapi import check_api
from catch_tools.interfaces.report import LayerResult, Report
from catch_tools.interfaces.schemas import BACKEND_NAMESPACES, Probes, check_schemas, runtime_facts
from catch_tools.progress import Reporter
from catch_tools.wheel.inputs import BACKEND_PACKAGE
from catch_tools.wheel.metadata import member_text

ALL_LAYERS = (0, 1, 2, 3)
#: What each layer compares (progress lines).
LAYER_NAMES = {0: "files and metadata", 1: "ELF symbols", 2: "operator schemas", 3: "Python API"}
#: ``.dist-info`` files the layers read as text.
TEXT_METADATA = ("METADATA", "WHEEL", "RECORD", "entry_points.txt")


def check_metadata_text(pair: WheelPair) -> None:
    """Refuse, before any layer runs, a wheel whose :data:`TEXT_METADATA` files are not UTF-8.

    Raises:
        UserError (exit code 1): one line naming the wheel, the member and the line (see
            :func:`catch_tools.wheel.metadata.member_text`).
    """
    for reader, dist_info in ((pair.up, pair.up_di), (pair.new, pair.new_di)):
        for rel in TEXT_METADATA:
            if reader.get(f"{dist_info}/{rel}") is not None:
                member_text(reader, f"{dist_info}/{rel}", exit_code=1)


def run_check(upstream: Path, combined: Path, layers: Iterable[int] = ALL_LAYERS, *, python: str | None = None,
              namespaces: tuple[str, ...] = BACKEND_NAMESPACES, full_elf: bool = False,
              full_api: bool = False, runtime: bool = True, cache: bool = True,
              progress: Reporter | None = None) -> Report:
    """Compare ``combined`` with ``upstream`` on ``layers``; ``runtime=False`` skips layer 1's probe part;
    ``cache`` keeps the unpacked upstream tree and its probe for later runs (see :class:`WheelPair`); ``progress``
    (:mod:`catch_tools.progress`) is told each layer as it starts and ends.

    Raises:
        UserError (exit code 1): a wheel cannot be opened, or its metadata is not UTF-8 text.
    """
    shown = progress or Reporter()
    report = Report(str(upstream), str(combined))
    with WheelPair(upstream, combined, cache=cache) as pair:
        check_metadata_text(pair)
        probes = Probes(pair, python)
        try:
            wanted = set(layers)
            if 2 in wanted or (1 in wanted and runtime):  # probes overlap with layer 0 and with each other
                probes.prefetch(backend=2 in wanted and pair.new.get(f"{BACKEND_PACKAGE}/__init__.py") is not None)
            for layer in sorted(set(layers)):
                start = time.perf_counter()
                shown.step(f"interface check: layer {layer} ({LAYER_NAMES[layer]})")
                result: LayerResult
                if layer == 0:
                    result = check_files(pair)
                elif layer == 1:
                    result = check_elf(pair, full=full_elf)
                    if runtime:
                        runtime_facts(probes, result)
                elif layer == 2:
                    result = check_schemas(probes, namespaces)
                else:
                    result = check_api(pair, full=full_api)
                result.seconds = time.perf_counter() - start
                report.layers.append(result)
                shown.line(f"interface check: layer {layer} done ({result.seconds:.1f} s)")
        finally:
            probes.close()
    return report

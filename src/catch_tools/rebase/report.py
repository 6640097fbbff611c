# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

"""The rebase report: per patch status, old and new base, and ``git range-diff`` of the old series vs the new one.

Statuses: ``clean``, ``offset`` (applied with offset), ``3way`` (applied with 3-way merge -- flagged for review, as
it can fold a patch's change into an earlier one), ``resolved`` (conflict resolved by hand), ``upstreamed`` (dropped
because upstream has the change; with the upstream commit when its patch-id matched, and the release that contains
it with that release's ``git_version``), ``dropped`` (the maintainer's drop: ``--drop NAME --reason``, or a conflict
resolved to no change with ``--continue --reason``; the reason is reported once).
The range-diff (``git range-diff``) lets a reviewer read the change of each patch instead of a diff of diffs.

A conflict's step names its upstream cause (``causes``: the upstream commits with their pull requests, or the
upstream hunks, that touched the patch's lines; :mod:`catch_tools.rebase.cause`). Every carried patch has a
``proof`` (:mod:`catch_tools.rebase.proving`): ``proven`` on the new base (its test fails without the series and
passes with it) or ``not proven`` with why -- ``obsolete?`` when its test passes on the new base without it. Only a
proven patch needs no review: ``clean`` means the patch still applies, not that it is still right.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from catch_tools import output
from catch_tools.git import Repo
from catch_tools.rebase.cause import Cause, UpstreamCommit, describe
from catch_tools.rebase.state import STATUSES, RebaseState

LABELS = {
    "clean": "clean",
    "offset": "applied with offset",
    "3way": "applied with 3-way",
    "resolved": "conflict resolved by hand",
    "upstreamed": "upstreamed (dropped)",
    "dropped": "dropped by the maintainer",
}


def range_diff(repo: Repo, old_base: str, old_tip: str, new_base: str, new_tip: str) -> str:
    """``git range-diff --no-color old_base..old_tip new_base..new_tip``.

    git refuses an empty range; then the lines are written in range-diff's own notation (``1: <sha> < -: -------``
    for a patch that is gone), so the report always shows what became of each old patch.
    """
    if old_base != old_tip and new_base != new_tip:
        return repo.run("range-diff", "--no-color", f"{old_base}..{old_tip}", f"{new_base}..{new_tip}").stdout
    lines = []
    for side, (base, tip) in (("<", (old_base, old_tip)), (">", (new_base, new_tip))):
        if base == tip:
            continue
        log = repo.run("log", "--reverse", "--format=%h %s", f"{base}..{tip}").stdout.splitlines()
        for number, entry in enumerate(log, start=1):
            sha, _, subject = entry.partition(" ")
            left, right = (f"{number}:  {sha}", "-:  -------") if side == "<" else ("-:  -------", f"{number}:  {sha}")
            lines.append(f"{left} {side} {right} {subject}")
    return "".join(f"{line}\n" for line in lines)


def build(state: RebaseState, new_tip: str, renamed: dict[str, str], rdiff: str, changed: list[str],
          pin: dict[str, str], upstreamed_in: dict[str, dict[str, str]] | None = None,
          proofs: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The report as a JSON-serialisable dict.

    ``upstreamed_in`` maps an upstreamed patch to ``{"release": tag, "git_version": upstream commit}``: the upstream
    release that contains it (reported as the patch's ``upstream_release``).

    ``renamed`` maps each input patch still in the series to its file name after the export (the engine names files
    ``NNNN-<subject>.patch`` by position); ``changed`` lists the input names whose file was rewritten or renamed.
    ``proofs`` maps each carried patch to its proof on the new base (:func:`catch_tools.rebase.proving.prove`),
    reported as the patch's ``proof``.

    Raises:
        RuntimeError: when the accounting fails (an input patch neither in the output nor dropped): a bug, never
            allowed to pass silently.
    """
    patches = []
    for p in state.patches:
        final = p.final_status
        patches.append({
            "name": p.name,
            "status": final,
            "label": LABELS.get(final, final),
            "steps": [{"onto": r.onto, "status": r.status, "detail": r.detail, "upstream_commit": r.upstream_commit,
                       "files": r.files, "causes": [asdict(c) for c in r.causes]} for r in p.results],
            "reason": p.drop_reason,
            "in_new_series": not p.gone,
            "new_name": renamed.get(p.name),
            "file_changed": p.name in changed,
            "upstream_release": (upstreamed_in or {}).get(p.name),
            "proof": (proofs or {}).get(p.name),
        })
    kept = [p.name for p in state.patches if not p.gone]
    gone = [p.name for p in state.patches if p.gone]
    names_out = list(renamed.values())
    # Every input patch is accounted for: inputs == outputs + upstreamed + dropped, nothing twice, nothing lost.
    if (sorted(kept + gone) != sorted(state.series_names) or kept != list(renamed)
            or len(set(names_out)) != len(names_out)
            or any(p.final_status not in ("upstreamed", "dropped") for p in state.patches if p.gone)):
        raise RuntimeError(f"patch accounting failed: inputs {state.series_names}, outputs {names_out}, gone {gone}")
    counts = Counter(p["status"] for p in patches)
    verdicts = [proof["verdict"] for proof in (proofs or {}).values()]
    return {
        "old_base": {"ref": state.old_base_ref, "commit": state.old_base},
        "new_base": {"ref": state.steps[-1], "commit": state.step_commits[-1], "pin": pin},
        "steps": [{"onto": ref, "commit": c} for ref, c in zip(state.steps, state.step_commits, strict=True)],
        "three_way": state.three_way,
        "inputs": len(state.series_names),
        "outputs": len(names_out),
        "counts": {s: counts.get(s, 0) for s in STATUSES},
        "proven": verdicts.count("proven"),
        "not_proven": verdicts.count("not proven"),
        "patches": patches,
        "series_after": names_out,
        "old_tip": state.old_tip,
        "new_tip": new_tip,
        "range_diff": rdiff,
    }


def to_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, sort_keys=True) + "\n"


def to_markdown(report: dict[str, Any]) -> str:
    """The report for humans (GitHub-flavoured Markdown)."""
    old, new = report["old_base"], report["new_base"]
    via = " -> ".join(s["onto"] for s in report["steps"])
    lines = [
        "# Patch series rebase report",
        "",
        f"- old base: `{old['ref']}` ({old['commit']})",
        f"- new base: `{new['ref']}` ({new['commit']})",
        f"- new pin: tag `{new['pin']['tag']}`, commit `{new['pin']['commit']}`, wheel `{new['pin']['wheel_version']}`",
        f"- steps: {via}; 3-way: {'on' if report['three_way'] else 'off'}",
        f"- patches: {report['inputs']} in, {report['outputs']} out, "
        + ", ".join(f"{n} {LABELS[s]}" for s, n in report["counts"].items() if n),
        f"- proof on the new base: {report['proven']} proven, {report['not_proven']} not proven (only a proven "
        "patch needs no review)",
        "",
        "| # | patch | status | proof | details |",
        "|---|---|---|---|---|",
    ]
    for number, p in enumerate(report["patches"], start=1):
        details = "; ".join(_step_text(s, len(report["steps"]) > 1) for s in p["steps"]
                            if (s["detail"] or s["files"]) and s["detail"] != p["reason"])
        if p["reason"]:
            details = f"reason: {p['reason']}" + (f"; {details}" if details else "")
        details = _upstream_text(p) + details + "".join(f"; {c}" for c in _cause_lines(p, whole=False)
                                                         if not c.startswith(" "))
        name = f"`{p['name']}`" + (f" -> `{p['new_name']}`" if p["new_name"] not in (None, p["name"]) else "")
        lines.append(f"| {number} | {name} | {p['label']} | {proof_text(p)} | {details.replace('|', '/')} |")
    causes = [(p["name"], _cause_lines(p, whole=True)) for p in report["patches"]]
    if any(found for _, found in causes):
        lines += ["", "## Upstream changes behind the conflicts"]
        for name, found in causes:
            if found:
                lines += ["", f"`{name}`:", "", "```diff", *found, "```"]
    lines += ["", "## Range-diff (old series vs new series)", "", "```diff", report["range_diff"].rstrip(), "```", ""]
    return "\n".join(lines)


def proof_text(p: dict[str, Any]) -> str:
    """``proven``, ``not proven: <why>`` (``obsolete? ...`` when upstream does it), or ``""`` for a patch gone."""
    proof = p.get("proof")
    if not proof:
        return ""
    return proof["verdict"] + (f": {proof['reason']}" if proof["reason"] else "")


def _cause_lines(p: dict[str, Any], *, whole: bool) -> list[str]:
    """The upstream causes of the patch's conflicts (:func:`catch_tools.rebase.cause.describe`), from the JSON."""
    causes = [Cause(c["file"], c["start"], c["end"], [UpstreamCommit(**u) for u in c["commits"]], c["hunks"])
              for s in p["steps"] for c in s.get("causes", [])]
    return describe(causes, whole=whole)


def _upstream_text(p: dict[str, Any]) -> str:
    """``in upstream v2.15.0 (git_version <sha>); `` for an upstreamed patch, else ``""``."""
    found = p.get("upstream_release")
    if not found:
        return ""
    version = f" (git_version {found['git_version']})" if found.get("git_version") else ""
    return f"in upstream {found['release']}{version}; "


def _step_text(step: dict[str, Any], several: bool) -> str:
    text = step["detail"]
    if step["files"]:
        text += f" (files: {', '.join(step['files'])})"
    return f"{step['onto']}: {text}" if several else text


def print_summary(report: dict[str, Any], paths: list[Path]) -> None:
    """A short table on stdout (:mod:`catch_tools.output`: patch names whole, one row a line when not a terminal),
    then where the report is and what comes next."""
    table = output.table(f"rebase {report['old_base']['ref']} -> {report['new_base']['ref']}")
    for header in ("patch", "status", "proof", "details"):
        output.column(table, header)
    for p in report["patches"]:
        details = p["reason"] or "; ".join(s["detail"] for s in p["steps"] if s["detail"])
        details = _upstream_text(p) + details + "".join(f"; {c}" for c in _cause_lines(p, whole=False)
                                                         if not c.startswith(" "))
        table.add_row(p["name"], p["label"], proof_text(p), details)
    output.print_table(table)
    output.say(f"{report['inputs']} patches in, {report['outputs']} out; proof on {report['new_base']['ref']}: "
               f"{report['proven']} proven, {report['not_proven']} not proven; report: " + ", ".join(map(str, paths)))
    output.say(f"next: python scripts/upgrade.py (the {report['new_base']['ref']} wheel: fetch, backend build and "
               "suite, proof gate, combined wheel, interface check, digits demo; docs/upgrade.md)")

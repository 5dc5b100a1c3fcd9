"""Reproduction ``families``: the baselines' ratios grow like ``sqrt(M)``, Sorted-F's stay 1.

Every policy runs on every adversarial family instance (:mod:`lpsched.generators.families`)
through the executor; each family's own policy must meet its closed-form TEL exactly.
Source: ours.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...generators.families import FAMILIES, family_good_schedule, family_instance, family_tels
from ...policies.registry import run_policy
from ...sweeps.checks import RowRules
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep
from ...sweeps.tables import markdown_table, report_path, reproduction_run, write_report

__all__ = ["NAME", "DESCRIPTION", "FAMILY_FIELDS", "family_sweep", "run"]

NAME = "families"
DESCRIPTION = (
    "adversarial families: FCFS, MC-SF and size ratios growing with M while Sorted-F stays at 1"
)
FAMILY_FIELDS = ["family", "memory", "n", "policy", "tel", "good_tel", "ratio", "closed_form"]


def family_sweep(
    out_dir: str | os.PathLike[str],
    *,
    memories: Sequence[int] = (16, 64, 256, 1024, 4096, 16384),
    families: Sequence[str] = ("fcfs", "mcsf", "size"),
    policies: Sequence[str] = ("fcfs", "mcsf", "size", "sorted-f"),
    **engine: Any,
) -> list[dict[str, str]]:
    """TEL of every policy on every adversarial family instance, against the good schedule.

    Parameters
    ----------
    out_dir : path-like
        Folder of ``families.csv`` (resumed): one row per (family, M, policy) with the
        executor's ``tel``, the good schedule's ``good_tel``, ``ratio = tel / good_tel`` and
        ``closed_form`` (for the family's own policy: the closed-form TEL, else empty).
    memories : sequence of int
        Budgets ``M`` (tokens).
    families : sequence of str
        Names of :data:`lpsched.generators.families.FAMILIES`.
    policies : sequence of str
        Registry names. Sorted-F runs its ``dp`` Phase 1 up to 40 requests, ``swap`` above.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep`.

    Returns
    -------
    list of dict
        The rows of these families, budgets and policies.

    Raises
    ------
    AssertionError
        If an executor TEL differs from its closed form (a bug, never expected).

    Notes
    -----
    Source: ours (families in :mod:`lpsched.generators.families`).
    """

    rows = tuple({"policy": p} for p in policies)
    tasks = [Task({"family": fam, "memory": M}, rows) for fam in families for M in memories]
    sweep = Sweep(
        NAME,
        FAMILY_FIELDS,
        ["family", "memory", "policy"],
        tasks,
        _family_rows,
        types={"memory": int, "n": int, "tel": int, "good_tel": int, "ratio": finite_float},
        check=_check_row,
        rules=RowRules(shared=("n", "good_tel")),
    )
    return run_sweep(sweep, out_dir, **engine)


def _family_rows(
    params: Mapping[str, Any], missing: list[dict[str, Any]]
) -> Iterator[dict[str, Any]]:
    """One family instance: every missing policy, checked against the closed forms."""
    inst = family_instance(params["family"], params["memory"])
    good = family_good_schedule(inst).tel
    closed_h, closed_g = family_tels(params["family"], params["memory"])
    assert good == closed_g
    for key in missing:
        policy = key["policy"]
        solver = "dp" if inst.n <= 40 else "swap"
        tel = run_policy(inst, policy, solver=solver).check().tel
        own = policy == FAMILIES[params["family"]].policy
        if own:
            assert tel == closed_h, (params, tel, closed_h)
        yield {
            **key,
            "n": inst.n,
            "tel": tel,
            "good_tel": good,
            "ratio": tel / good,
            "closed_form": closed_h if own else "",
        }


def _check_row(v: Mapping[str, Any]) -> str | None:
    """A row read back must agree with the closed form of its family (SPEC-free arithmetic)."""
    closed_h, closed_g = family_tels(v["family"], v["memory"])
    if v["good_tel"] != closed_g or abs(v["ratio"] - v["tel"] / v["good_tel"]) > 1e-4:
        return f"good TEL {v['good_tel']} or ratio {v['ratio']} disagrees with the closed form"
    if v["tel"] < closed_g or v["n"] < 1:
        return f"TEL {v['tel']} is below the good schedule's {closed_g}, which is optimal or close"
    if v["policy"] == FAMILIES[v["family"]].policy and v["tel"] != closed_h:
        return f"TEL {v['tel']} of the family's own policy differs from its closed form {closed_h}"
    return None


def _family_table(rows: Sequence[Mapping[str, str]]) -> str:
    fams = list(dict.fromkeys(r["family"] for r in rows))
    pols = list(dict.fromkeys(r["policy"] for r in rows))
    out = []
    for fam in fams:
        for M in sorted({int(r["memory"]) for r in rows if r["family"] == fam}):
            sub = {r["policy"]: r for r in rows if r["family"] == fam and int(r["memory"]) == M}
            row = {"family": fam, "M": M, "n": next(iter(sub.values()))["n"]}
            for p in pols:
                row[p] = f"{float(sub[p]['ratio']):.2f}" if p in sub else "-"
            out.append(row)
    return markdown_table(out, ["family", "M", "n", *pols])


@reproduction_run
def run(
    out_dir: str | os.PathLike[str],
    *,
    memories: Sequence[int] = (16, 64, 256, 1024, 4096, 16384),
    plot: bool = True,
    **engine: Any,
) -> str:
    """Reproduction ``families``: the baselines' ratios grow like ``sqrt(M)``, Sorted-F's stay 1.

    Parameters
    ----------
    out_dir : path-like
        Writes ``families.csv`` (:func:`family_sweep`), ``families.md`` and, with ``plot``,
        ``families.png`` (ratio against ``M``, log-log).
    memories : sequence of int
        Budgets ``M`` (tokens) run through the executor; the plot adds the closed forms up to
        ``10^6``.
    plot : bool
        Write the PNG.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep`.

    Returns
    -------
    str
        Markdown: per family and ``M``, ``TEL(policy) / TEL(good)`` for every policy, then
        the closed forms. Source: ours (:mod:`lpsched.generators.families`).
    """
    out = Path(out_dir)
    rows = family_sweep(out, memories=memories, **engine)
    text = (
        "TEL(policy) / TEL(good schedule) on the adversarial families (executor runs):\n\n"
        + _family_table(rows)
        + "\n\nClosed forms (rounds): fcfs L = floor(sqrt M), q = "
        "floor(M/L): (L + q(L+1)) / (q + L + 1); mcsf q = floor(M/2), k = floor(sqrt 2M): "
        "(k(k+1)/2 + q(k+2)) / (2q + 2k + k(k+1)/2); size L = M-1, r = floor(sqrt 2L): "
        "(L + rL + r(r+1)/2) / (r(r+1)/2 + r + L).\n"
    )
    write_report(out, NAME, text)
    if plot:
        # matplotlib loads only when a figure is drawn: the command line starts fast
        from ...plotting.families import plot_families
        from ...plotting.style import save_figure

        save_figure(plot_families(rows), report_path(out, "families", ".png"))
    return text

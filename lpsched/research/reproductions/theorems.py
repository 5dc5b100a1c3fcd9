"""The proven guarantees the ``ratios`` reproduction measures against: each algorithm's
constant, the instances its theorem covers, and the per-algorithm summary.

The seed paper (arXiv 2508.06133, section 4) proves ``TEL(Sorted-F) <= 48 OPT`` on any offline
instance. The algorithms that followed (``algorithms-2026``) prove their own constants under
their own assumptions (:data:`THEOREMS`): SVF ``1 + 2 / (1 - alpha)`` when every peak is at most
``alpha M``, the staggered pipeline SPS 2 with one prompt and one decode length, GBA and GBA-D
10.67 with one prompt length; the blind policies (SPEC section 11) GSA 61.92 with one prompt
length (GSA-Spec measured against the same), Rect 36 in the large or the small prompt-heavy
regime of arXiv 2607.09248 and Response 236/3 in its response-heavy regime (``Lambda = M / 4``),
Route and 1-bit SVF with no constant recovered. :func:`applies` says on which small workloads
(:mod:`lpsched.generators.small`) a policy runs; :func:`theorem_summary` sets the worst ratio
found beside the constant.

Source: ours; the constants as cited in :data:`THEOREMS`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ...instance import Instance
from ...sweeps.tables import markdown_table

__all__ = [
    "SORTED_F_BOUND",
    "THEOREM_POLICIES",
    "BLIND_THEOREM_POLICIES",
    "Theorem",
    "THEOREMS",
    "peak_alpha",
    "applies",
    "theorem_summary",
    "search_summary",
]

#: The proven approximation ratio of Sorted-F (arXiv 2508.06133, section 4).
SORTED_F_BOUND = 48

#: Policies of the per-algorithm table (:func:`theorem_sweep`), in its row order.
THEOREM_POLICIES = ("sorted-f", "svf", "sps", "gba", "gba-d", "volume")
#: The blind policies of the per-algorithm table (SPEC section 11), after
#: :data:`THEOREM_POLICIES`; a name this lpsched does not register is left out.
BLIND_THEOREM_POLICIES = ("gsa", "gsa-spec", "svf-1bit", "rect", "response", "route")


def peak_alpha(instance: Instance) -> float:
    """The instance's ``alpha``: its largest peak ``max_i (s_i + o_i)`` over ``M`` (in (0, 1])."""
    return float(instance.size.max()) / instance.memory if instance.n else 0.0


def _svf_constant(instance: Instance) -> float:
    """SVF's constant at the instance's own ``alpha``: ``1 + 2 / (1 - alpha)`` (inf at 1)."""
    alpha = peak_alpha(instance)
    return 1 + 2 / (1 - alpha) if alpha < 1 else math.inf


def _offline(instance: Instance) -> bool:
    return instance.offline


def _svf_meets(instance: Instance) -> bool:
    return instance.offline and peak_alpha(instance) < 1


def _one_prompt(instance: Instance) -> bool:
    return instance.offline and len(set(instance.prefill.tolist())) <= 1


def _one_request_shape(instance: Instance) -> bool:
    return _one_prompt(instance) and len(set(instance.decode.tolist())) <= 1


def _large(instance: Instance) -> bool:
    """Every prompt above ``Lambda = M / 4`` (arXiv 2607.09248's large regime)."""
    return bool(np.all(4 * instance.prefill > instance.memory))


def _small(instance: Instance) -> np.ndarray:
    return np.asarray(4 * instance.prefill <= instance.memory)


def _rect_regime(instance: Instance) -> bool:
    """All at round 0, and every request large, or every one small and prompt-heavy
    (``s_i <= M/4``, ``o_i <= s_i``)."""
    heavy = bool(np.all(_small(instance) & (instance.decode <= instance.prefill)))
    return instance.offline and (_large(instance) or heavy)


def _response_regime(instance: Instance) -> bool:
    """All at round 0, every request small and response-heavy (``s_i <= M/4``,
    ``o_i > s_i``)."""
    return instance.offline and bool(
        np.all(_small(instance) & (instance.decode > instance.prefill))
    )


@dataclass(frozen=True)
class Theorem:
    """A proven guarantee ``TEL(policy) <= c OPT`` and the instances it covers.

    Attributes
    ----------
    policy : str
        Registry name of the algorithm.
    assumption : str
        The theorem's assumption, in words (for the table).
    workloads : tuple of str or None
        The small workloads whose instances meet the assumption (the only ones the policy is
        run on); None: every workload.
    constant : str
        The constant as the table writes it.
    source : str
        Where the constant is proven.
    bound : callable or None
        ``bound(instance) -> c``: the constant for one instance (SVF's depends on the
        instance's ``alpha``); None: no proven constant.
    meets : callable
        ``meets(instance) -> bool``: whether an instance meets the assumption (checked before
        every run of the policy: a workload that breaks it is a bug, not a data point).
    """

    policy: str
    assumption: str
    workloads: tuple[str, ...] | None
    constant: str
    source: str
    bound: Callable[[Instance], float] | None
    meets: Callable[[Instance], bool]


def _constant(c: float) -> Callable[[Instance], float]:
    return partial(_fixed, c)


def _fixed(c: float, instance: Instance) -> float:
    return c


#: The theorems of the per-algorithm table, by policy name. GBA's 10.67 is read as 32/3
#: (our reading of the rounded figure; the stricter of the two).
THEOREMS: dict[str, Theorem] = {
    t.policy: t
    for t in (
        Theorem(
            "sorted-f",
            "any offline instance",
            None,
            "48",
            "arXiv 2508.06133, section 4",
            _constant(float(SORTED_F_BOUND)),
            _offline,
        ),
        Theorem(
            "svf",
            "all at round 0, every peak s_i + o_i <= alpha M",
            ("small-peaks",),
            "1 + 2/(1 - alpha)",
            "arXiv 2606.22327 (as summarised)",
            _svf_constant,
            _svf_meets,
        ),
        Theorem(
            "sps",
            "one prompt length s, one decode length o",
            ("identical",),
            "2",
            "arXiv 2601.22996 (as summarised)",
            _constant(2.0),
            _one_request_shape,
        ),
        *(
            Theorem(
                name,
                "one prompt length s, any decode lengths",
                ("common-prompt", "identical"),
                "10.67",
                "arXiv 2601.22996",
                _constant(32 / 3),
                _one_prompt,
            )
            for name in ("gba", "gba-d")
        ),
        *(
            Theorem(
                name,
                "one prompt length s, all at round 0, o_i unknown (kill and restart)",
                ("common-prompt", "identical"),
                "61.92",
                "arXiv 2601.22996" + (" (stated for GSA; for GSA-Spec ours)" if spec else ""),
                _constant(61.92),
                _one_prompt,
            )
            for name, spec in (("gsa", False), ("gsa-spec", True))
        ),
        Theorem(
            "svf-1bit",
            "all at round 0, a class bit o_i > T (its constant was not recovered)",
            None,
            "none recovered",
            "arXiv 2606.22327 (as summarised)",
            None,
            _offline,
        ),
        Theorem(
            "rect",
            "all at round 0; every s_i > M/4, or every s_i <= M/4 with o_i <= s_i",
            ("large-prompts", "prompt-heavy"),
            "36",
            "arXiv 2607.09248 (as summarised)",
            _constant(36.0),
            _rect_regime,
        ),
        Theorem(
            "response",
            "all at round 0; every s_i <= M/4 with o_i > s_i",
            ("response-heavy",),
            "236/3",
            "arXiv 2607.09248 (as summarised)",
            _constant(236 / 3),
            _response_regime,
        ),
        Theorem(
            "route",
            "all at round 0 (O(1), the constant was not recovered)",
            None,
            "O(1), not recovered",
            "arXiv 2607.09248 (as summarised)",
            None,
            _offline,
        ),
        Theorem(
            "volume",
            "none published (SVF's order on lpsched's executor; SVF's proof carries over "
            "under SVF's assumptions, SPEC 4.1, ours)",
            None,
            "none",
            "ours",
            None,
            _offline,
        ),
    )
}


def applies(policy: str, workload: str) -> bool:
    """Whether ``policy`` (``name[+backfill]``) runs on ``workload``: always for a policy
    without a theorem in :data:`THEOREMS`, otherwise when the workload meets its assumptions
    (the theorem of the name without ``+backfill``). Source: ours."""
    theorem = THEOREMS.get(policy.partition("+")[0])
    return theorem is None or theorem.workloads is None or workload in theorem.workloads


_ABOVE = "**above the constant: our reading is wrong**"


def theorem_summary(
    rows: Sequence[Mapping[str, Any]], policies: Sequence[str] | None = None
) -> str:
    """Markdown table of a :func:`theorem_sweep`: per algorithm, its theorem's assumption, the
    workloads (``all N`` for every workload of the rows) and number of instances it ran on,
    the mean and worst ``TEL / OPT``, the range of the instances' ``alpha`` (largest peak
    over ``M``), its proven constant (SVF's over the instances' ``alpha``), the worst
    ``(TEL / OPT) / constant`` with its instance, and a verdict: ``within`` (at most 1), the
    flag ``above the constant: our reading is wrong``, or ``no proven constant``.

    Parameters
    ----------
    rows : sequence of mapping
        Rows of :func:`theorem_sweep` (strings or numbers).
    policies : sequence of str, optional
        The algorithms, in row order; one without rows gets a row saying so. Default: those of
        the rows, in order of appearance.

    Returns
    -------
    str
        The table. A ratio taken to a best-known (not proven) optimum is a lower bound on the
        true ratio; the verdict then says how many. Source: ours.
    """
    by: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by.setdefault(str(r["policy"]), []).append(r)
    order = list(dict.fromkeys([*(policies or ()), *by]))
    every = {str(r["workload"]) for r in rows}
    out = []
    for p in order:
        theorem = THEOREMS.get(p)
        rs = by.get(p, [])
        entry = {
            "algorithm": p,
            "assumption": theorem.assumption if theorem else "none (no theorem here)",
            "workloads": _workloads_cell({str(r["workload"]) for r in rs}, every),
            "instances": str(len(rs)),
            "mean TEL/OPT": "-",
            "worst TEL/OPT": "-",
            "alpha": "-",
            "constant": theorem.constant if theorem else "none",
            "worst ratio/constant": "-",
            "worst instance": "-",
            "verdict": "no instance meets its assumptions in this run",
        }
        out.append(entry)
        if not rs:
            continue
        ratio = np.array([float(r["ratio_opt"]) for r in rs])
        alpha = np.array([float(r["alpha"]) for r in rs])
        consts = [None if r["constant"] in ("", None) else float(r["constant"]) for r in rs]
        entry["mean TEL/OPT"] = f"{ratio.mean():.3f}"
        entry["worst TEL/OPT"] = f"{ratio.max():.3f}"
        entry["alpha"] = (
            f"{alpha.min():.2f}-{alpha.max():.2f}"
            if alpha.min() < alpha.max()
            else f"{alpha[0]:.2f}"
        )
        unproven = sum(1 for r in rs if r["opt_status"] != "optimal")
        note = f" ({unproven} optima not proven: lower bounds)" if unproven else ""
        if any(c is None for c in consts):
            worst = int(ratio.argmax())
            entry["verdict"] = "no proven constant" + note
        else:
            c = np.array(consts, dtype=float)
            rc = ratio / c
            worst = int(rc.argmax())
            if c.min() < c.max():
                entry["constant"] += f" = {c.min():.2f}-{c.max():.2f}"
            entry["worst ratio/constant"] = f"{rc.max():.3f}"
            entry["verdict"] = (_ABOVE if rc.max() > 1 + 1e-9 else "within") + note
        w = rs[worst]
        entry["worst instance"] = f"{w['workload']} n={w['n']} M={w['memory']} seed={w['seed']}"
    return markdown_table(
        out,
        [
            "algorithm",
            "assumption",
            "workloads",
            "instances",
            "mean TEL/OPT",
            "worst TEL/OPT",
            "alpha",
            "constant",
            "worst ratio/constant",
            "worst instance",
            "verdict",
        ],
        numparse=False,
    )


def _workloads_cell(mine: set[str], every: set[str]) -> str:
    """The workloads an algorithm ran on: ``all N`` when they are all those of the run."""
    if len(every) > 1 and mine == every:
        return f"all {len(every)}"
    return ", ".join(sorted(mine)) or "-"


def search_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """Markdown table of worst-ratio searches under the theorems' assumptions: per policy, the
    assumption, the worst ``TEL / OPT`` found, its instance, the constant there and the
    verdict (as :func:`theorem_summary`'s).

    Parameters
    ----------
    rows : sequence of mapping
        Rows of :func:`~lpsched.research.adversarial.search_row` (``policy``, ``ratio``,
        ``tel``, ``opt``, ``optimal``, ``memory``, ``prefill``, ``decode`` as JSON lists,
        ``evaluations``, ``runtime_s``).

    Returns
    -------
    str
        The table. Source: ours.

    Raises
    ------
    ValueError
        A worst instance that does not meet its policy's theorem (the search broke it).
    """
    out = []
    for r in rows:
        theorem = THEOREMS[str(r["policy"])]
        inst = Instance.from_arrays(
            json.loads(str(r["prefill"])), json.loads(str(r["decode"])), int(r["memory"])
        )
        if not theorem.meets(inst):
            raise ValueError(f"the worst instance of {theorem.policy} breaks its assumption")
        ratio = float(r["ratio"])
        c = theorem.bound(inst) if theorem.bound is not None else None
        proven = str(r["optimal"]) in ("True", "true", "1")
        verdict = "no proven constant" if c is None else (_ABOVE if ratio > c + 1e-9 else "within")
        out.append(
            {
                "algorithm": theorem.policy,
                "assumption": theorem.assumption,
                "worst TEL/OPT": f"{ratio:.3f}" + ("" if proven else " (OPT not proven)"),
                "TEL / OPT": f"{r['tel']} / {r['opt']}",
                "instance (M; s; o)": f"M={r['memory']}; s={r['prefill']}; o={r['decode']}",
                "constant": theorem.constant,
                "ratio/constant": "-" if c is None else f"{ratio / c:.3f}",
                "evaluations": str(r["evaluations"]),
                "verdict": verdict,
            }
        )
    return markdown_table(out, list(out[0]) if out else ["algorithm"], numparse=False)

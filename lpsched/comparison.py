"""Policies compared on one instance: what ``lpsched run`` computes, as a library function.

:func:`compare_policies` runs each policy, checks its schedule, and returns one row per policy
(TEL, mean latency, makespan, peak memory, evictions, wall time, ratio to the best TEL and TEL
over a lower bound on the optimum, :func:`lower_bound`; with a time model the same schedules
read in seconds, with their ratio to the best in seconds), the policies that could not run on this
instance (a documented refusal: the LP of ``sorted-lp`` too large, GBA-D's profile too long),
and the seed paper's headline ratios (FCFS / Sorted-F, MC-SF / Sorted-F) measured here.
:meth:`Comparison.summary` is the text of ``lpsched run`` and :meth:`Comparison.to_dict` its
``--json``; :func:`default_policies` and :func:`check_clock` choose and check its policies, and
:func:`select_compared_policies` reads them from ``--policies``.
Notebooks and reproductions can call all of them too.

Source: ours; the paper's ratios are arXiv 2508.06133, section 6.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tabulate import tabulate

from .bounds import combinatorial_bound
from .certify import lp_bound
from .formulations.horizon import HorizonError
from .generators.workloads import MIXTURES, PAPER_MEMORY, PAPER_N, headline_ratios
from .instance import Instance
from .policies.pipeline import ProfileTooLongError
from .policies.registry import CLOCK_POLICIES, PolicySelectionError, parse_policy, run_policy
from .policies.selection import select_policies
from .policies.sorted_f import resolve_phase1
from .solvers.result import LPTooLargeError
from .timing import TimeModel, to_seconds
from .timing.seconds import SECONDS_COLUMNS, model_line, seconds_cell

__all__ = [
    "DEFAULT_ONLINE_POLICIES",
    "DEFAULT_POLICIES",
    "SKIPPED",
    "Comparison",
    "check_clock",
    "compare_policies",
    "default_policies",
    "lower_bound",
    "select_compared_policies",
    "RUN_LP_NONZEROS",
]

#: The refusals that skip a policy instead of stopping the comparison.
SKIPPED = (LPTooLargeError, ProfileTooLongError)

#: The default comparison of an offline instance: the seed paper's four and ``volume``, SVF's
#: order (arXiv 2606.22327), the best of the algorithms that followed it on the paper's workload
#: (``docs/results/algorithms.md``).
DEFAULT_POLICIES = ("fcfs", "mcsf", "size", "sorted-f", "volume")
#: The default comparison of an instance with arrivals.
DEFAULT_ONLINE_POLICIES = ("online-fcfs", "online-mcsf", "online-sorted-f")
#: Largest time-indexed LP (non-zeros) that :func:`lower_bound` solves: HiGHS takes well under
#: a second at this size (0.01 s on the shipped exact instances, 858-8,025 non-zeros), and with
#: no time limit the bound never depends on the machine's load. Above it (the default
#: instance's LP has 2 x 10^11), the combinatorial bound alone.
RUN_LP_NONZEROS = 100_000


def lower_bound(instance: Instance) -> tuple[float, str]:
    """The lower bound on the optimal TEL that ``lpsched run`` measures each policy against.

    Returns
    -------
    (float, str)
        The bound (rounds) and its method: ``"lp"``, the LP relaxation of SPEC section 3
        (:func:`lpsched.certify.lp_bound`, at the tight horizon, no time limit) when its model
        has at most :data:`RUN_LP_NONZEROS` non-zeros and it beats the combinatorial bound;
        else ``"combinatorial"`` (:func:`lpsched.bounds.combinatorial_bound`, SPEC section 7,
        O(n log n)).

    Notes
    -----
    Source: ours (which bound, and when); the bounds: SPEC sections 3 and 7. A tighter bound
    at any size: ``lpsched certify``.
    """
    comb = combinatorial_bound(instance)
    try:
        lp = lp_bound(instance, max_nonzeros=RUN_LP_NONZEROS).bound
    except (LPTooLargeError, HorizonError):
        lp = None
    return (lp, "lp") if lp is not None and lp > comb else (comb, "combinatorial")


@dataclass(frozen=True)
class Comparison:
    """The policies of :func:`compare_policies` on one instance.

    Attributes
    ----------
    instance : Instance
    results : list of dict
        One per policy that ran, in the order asked: ``policy``, ``tel`` and ``mean_latency``
        (rounds), ``makespan`` (rounds), ``peak_memory`` (tokens), ``evictions``,
        ``wasted_tokens``, ``runtime_s`` (its wall time, s), ``ratio_to_best`` (TEL over the
        smallest TEL of the comparison), ``ratio_to_bound`` (TEL over :attr:`lower_bound`, None
        without one); with a time model also the figures of
        :meth:`lpsched.timing.seconds.ScheduleSeconds.stats` (``tel_s``, ``mean_latency_s``, ...)
        and ``ratio_to_best_s`` (``tel_s`` over the smallest of the comparison).
    skipped : list of dict
        ``{"policy", "error"}`` for each policy that refused the instance (:data:`SKIPPED`).
    paper_ratios : list of dict
        The paper's headline ratios whose policies ran (:func:`lpsched.generators.workloads.
        headline_ratios`: ``ratio``, ``value``, ``paper``; with a time model also ``value_s``,
        the same ratio in seconds); empty for an instance with arrivals on a clock.
    papers_setting : bool
        Whether the instance is the paper's setting: one of the 80/20 mixes
        (:data:`~lpsched.generators.workloads.MIXTURES`, by its ``workload`` metadata) at the
        paper's n and M, so the ratios compare with the paper's figures.
    time_model : TimeModel or None
    clocked : bool
        Whether the policies admitted requests on the time model's clock (an instance with
        ``arrival_s``; SPEC section 10).
    phase1 : str
        The Sorted-F Phase-1 solver of the policies that declare the option ``solver``
        (:func:`lpsched.policies.sorted_f.resolve_phase1` of the option, ``auto`` without it).
    lower_bound : float or None
        :func:`lower_bound` of the instance (rounds); None when the policies admitted on a
        clock (:attr:`clocked`), whose schedules the round model's bounds do not cover.
    bound_method : str or None
        ``"lp"`` or ``"combinatorial"``; None with no bound.
    """

    instance: Instance
    results: list[dict[str, Any]]
    skipped: list[dict[str, str]]
    paper_ratios: list[dict[str, Any]]
    papers_setting: bool
    time_model: TimeModel | None
    clocked: bool
    phase1: str
    lower_bound: float | None = None
    bound_method: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``lpsched run --json``: the instance, the Phase-1 solver and the comparison.

        Returns
        -------
        dict
            ``instance`` (name), ``n``, ``memory`` (tokens), ``phase1``, ``time_model`` (with
            one), ``arrivals_in_seconds`` (only when :attr:`clocked`), ``results``,
            ``skipped``, ``paper_ratios``, ``lower_bound``, ``bound_method``. Source: ours.
        """
        inst, model = self.instance, self.time_model
        out: dict[str, Any] = {
            "instance": inst.name,
            "n": inst.n,
            "memory": inst.memory,
            "phase1": self.phase1,
        }
        if model is not None:
            out["time_model"] = model.to_dict()
        if self.clocked:  # only then: the output without arrival_s is as before
            out["arrivals_in_seconds"] = True
        out.update(results=self.results, skipped=self.skipped, paper_ratios=self.paper_ratios)
        out.update(lower_bound=self.lower_bound, bound_method=self.bound_method)
        return out

    def summary(self) -> str:
        """``lpsched run``'s tables: rounds, seconds (with a time model), the skipped policies,
        the paper's ratios (in the paper's setting) and notes on arrivals. Source: ours."""
        inst, model = self.instance, self.time_model
        names = [r["policy"] for r in self.results + self.skipped]
        uses_phase1 = any("solver" in parse_policy(name)[0].options for name in names)
        lines = [
            f"instance {inst.name}: n = {inst.n} requests, KV cache M = {inst.memory} tokens"
            + (f", Sorted-F Phase 1: {self.phase1}" if uses_phase1 else ""),
            self._rounds_table(),
            *([self._bound_line()] if self.results else []),
        ]
        if model is not None:
            lines += ["", model_line(model)]
            if self.clocked:
                lines.append(
                    "arrivals in seconds (arrival_s): the policies admitted each request once "
                    "it had arrived on this clock; latencies count from arrival_s"
                )
            rows = [
                [r["policy"]] + [seconds_cell(r, key, fmt) for key, _, fmt in SECONDS_COLUMNS]
                for r in self.results
            ]
            for row, r in zip(rows, self.results, strict=True):  # after TEL (s)
                row.insert(2, seconds_cell(r, "ratio_to_best_s", "{:.3f}"))
            heads = [head for _, head, _ in SECONDS_COLUMNS]
            lines.append(_table(rows, ["policy", heads[0], "ratio to best", *heads[1:]]))
        lines += [f"skipped {r['policy']}: {r['error']}" for r in self.skipped]
        if self.paper_ratios and self.papers_setting:
            lines += ["", self._paper_table()]
        if inst.arrival_s is not None and model is None:
            lines.append(
                "note: this instance has arrivals in seconds (arrival_s); with --time-model NAME "
                "the online policies admit by them on that model's clock (SPEC section 10), "
                "without it every policy uses the arrival rounds"
            )
        if not inst.offline and any(parse_policy(n)[0].backfill for n in names):
            lines.append(
                "note: this instance has arrivals; a strict list policy waits for the head "
                "of its list to arrive (SPEC section 4). The online-* policies list only "
                "arrived requests (SPEC section 5)."
            )
        return "\n".join(lines)

    def _rounds_table(self) -> str:
        """The table in rounds (with evictions and wasted tokens when a policy evicted)."""
        headers = [
            "policy",
            "TEL (rounds)",
            "mean latency (rounds)",
            "ratio to best",
            "TEL / bound",
            "wall time (s)",
        ]
        evicting = any(r["evictions"] for r in self.results)
        if evicting:
            headers[5:5] = ["evictions", "wasted tokens"]
        rows = []
        for r in self.results:
            row = [
                r["policy"],
                r["tel"],
                f"{r['mean_latency']:.1f}",
                f"{r['ratio_to_best']:.3f}",
                seconds_cell(r, "ratio_to_bound", "{:.3f}"),
                f"{r['runtime_s']:.3f}",
            ]
            if evicting:
                row[5:5] = [r["evictions"], r["wasted_tokens"]]
            rows.append(row)
        return _table(rows, headers)

    def _bound_line(self) -> str:
        """What the column ``TEL / bound`` divides by."""
        if self.lower_bound is None:
            return (
                "TEL / bound: none, the policies admitted requests on the time model's clock "
                "(the round model's bounds do not cover those schedules)"
            )
        if self.bound_method == "lp":
            return (
                f"TEL / bound: over the LP relaxation, a lower bound of {self.lower_bound:.3f} "
                "rounds (SPEC section 3); 1.000 is optimal"
            )
        return (
            f"TEL / bound: over the combinatorial lower bound, {self.lower_bound} rounds (SPEC "
            f"section 7; the LP only up to {RUN_LP_NONZEROS:,} non-zeros); a tighter one: "
            "lpsched certify"
        )

    def _paper_table(self) -> str:
        """The paper's ratios measured here (and volume / Sorted-F), with the paper's source."""
        seconds = self.time_model is not None
        by_name = {r["policy"]: r for r in self.results}
        rows = [
            [p["ratio"], f"{p['value']:.2f}"]
            + ([f"{p['value_s']:.2f}"] if seconds else [])
            + [f"{p['paper']:.2f}"]
            for p in self.paper_ratios
        ]
        if "volume" in by_name and by_name.get("sorted-f", {}).get("tel"):
            vol, ref = by_name["volume"], by_name["sorted-f"]
            rows.append(
                ["volume (SVF's order) / Sorted-F", f"{vol['tel'] / ref['tel']:.2f}"]
                + ([f"{vol['tel_s'] / ref['tel_s']:.2f}"] if seconds else [])
                + ["-"]
            )
        headers = ["ratio of mean latency", "here (rounds)"] + (["here (s)"] if seconds else [])
        newer = len(rows) > len(self.paper_ratios)
        return (
            _table(rows, headers + ["paper"])
            + f"\npaper: arXiv 2508.06133, section 6; n = {PAPER_N}, M = {PAPER_MEMORY:,}, 80% "
            "LMSYS-Chat-1M conversations, 20% arXiv summarizations"
            + ("; volume: the order of SVF (arXiv 2606.22327) on this executor" if newer else "")
        )


def _table(rows: list[list[Any]], headers: list[str]) -> str:
    """A table of text cells, the first column left-aligned and the others right-aligned."""
    return tabulate(
        rows,
        headers=headers,
        disable_numparse=True,
        colalign=("left",) + ("right",) * (len(headers) - 1),
    )


def default_policies(instance: Instance, time_model: TimeModel | None = None) -> list[str]:
    """The policies ``lpsched run`` compares on ``instance`` when none are named.

    Returns
    -------
    list of str
        :data:`DEFAULT_ONLINE_POLICIES` for an instance with arrival rounds, or with arrivals
        in seconds under a time model (its clock); else :data:`DEFAULT_POLICIES`. Source: ours.
    """
    online = (time_model is not None and instance.arrival_s is not None) or not instance.offline
    return list(DEFAULT_ONLINE_POLICIES if online else DEFAULT_POLICIES)


def check_clock(instance: Instance, time_model: TimeModel | None, policies: Sequence[str]) -> None:
    """Refuse policies that admit by arrival rounds when the comparison runs on a clock: an
    instance with arrivals in seconds (``arrival_s``) under a time model (SPEC section 10).

    Raises
    ------
    PolicySelectionError
        Naming the policies that admit by rounds, and the ones that admit on the clock
        (:data:`lpsched.policies.registry.CLOCK_POLICIES`).
    KeyError
        An unknown policy name. Source: ours.
    """
    if time_model is None or instance.arrival_s is None:
        return
    others = [n for n in policies if not parse_policy(n)[0].clock]
    if others:
        one = len(others) == 1
        raise PolicySelectionError(
            f"instance {instance.name!r} has arrivals in seconds (arrival_s): under "
            f"--time-model only the policies that admit on the clock run on it "
            f"({', '.join(CLOCK_POLICIES)}); {', '.join(others)} admit{'s' if one else ''} by "
            f"arrival rounds: drop {'it' if one else 'them'} (or drop --time-model to run "
            "every policy in rounds)"
        )


def compare_policies(
    instance: Instance,
    policies: Sequence[str],
    *,
    time_model: TimeModel | None = None,
    options: Mapping[str, Any] | None = None,
) -> Comparison:
    """Run ``policies`` on ``instance``, check every schedule and compare them.

    Parameters
    ----------
    instance : Instance
    policies : sequence of str
        Registry names (``NAME`` or ``NAME+backfill``), in the order of the rows.
    time_model : TimeModel, optional
        Read every schedule in seconds; it is also passed as the option ``time_model`` to the
        policies that declare it (a clock on an instance with ``arrival_s``, or a plan in
        seconds).
    options : mapping, optional
        Options for :func:`~lpsched.policies.registry.run_policy`; each policy gets the ones
        it declares.

    Returns
    -------
    Comparison

    Raises
    ------
    KeyError
        An unknown policy name.
    ValueError
        A policy that fails on this instance other than by a documented refusal
        (:data:`SKIPPED`, reported in ``skipped``).
    lpsched.schedule.InfeasibleScheduleError
        A policy's schedule that fails the feasibility check (a bug of that policy).

    Notes
    -----
    Source: ours (``lpsched run``).
    """
    opts = dict(options or {})
    if time_model is not None:
        opts["time_model"] = time_model
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    seconds: list[dict[str, Any]] = []
    for name in policies:
        try:
            sched = run_policy(instance, name, **opts)
        except SKIPPED as exc:
            skipped.append({"policy": name, "error": str(exc)})
            continue
        sched.check()
        results.append(
            {
                "policy": name,
                **sched.summary(),  # tel, mean_latency, makespan, peak_memory
                "evictions": sched.evictions,
                "wasted_tokens": sched.wasted_tokens,
                "runtime_s": sched.info["runtime_s"],
            }
        )
        if time_model is not None:
            seconds.append(to_seconds(sched, time_model).stats())
    clocked = time_model is not None and instance.arrival_s is not None
    bound, method = lower_bound(instance) if results and not clocked else (None, None)
    best = min((r["tel"] for r in results), default=None)
    for r in results:
        r["ratio_to_best"] = r["tel"] / best
        r["ratio_to_bound"] = None if bound is None else r["tel"] / bound
    for r, figures in zip(results, seconds, strict=False):  # none without a time model
        r.update(figures)
    best_s = min((r["tel_s"] for r in results), default=None) if seconds else None
    for r in results if seconds else ():
        r["ratio_to_best_s"] = r["tel_s"] / best_s
    paper = (
        headline_ratios({r["policy"]: r["tel"] for r in results})
        if (instance.offline and not clocked)
        else []
    )
    if time_model is not None and paper:  # the same ratios read in seconds
        in_seconds = headline_ratios({r["policy"]: r["tel_s"] for r in results})
        for p, q in zip(paper, in_seconds, strict=True):
            p["value_s"] = q["value"]
    papers_setting = (instance.n, instance.memory) == (PAPER_N, PAPER_MEMORY) and (
        instance.metadata.get("workload") in MIXTURES
    )
    phase1 = resolve_phase1(opts.get("solver") or "auto", instance.n, instance.memory)
    return Comparison(
        instance,
        results,
        skipped,
        paper,
        papers_setting,
        time_model,
        clocked,
        phase1,
        bound,
        method,
    )


def select_compared_policies(
    text: str | None,
    options: Mapping[str, Any],
    load: Callable[[], Instance],
    time_model: TimeModel | None = None,
    *,
    reserved: Mapping[str, str] | None = None,
) -> tuple[Instance, list[str]]:
    """The instance and the policies that ``lpsched run --policies text`` compares on it.

    Parameters
    ----------
    text : str or None
        ``a,b,...``: the exact list, checked before ``load`` is called (a misspelled name is
        reported before the file is read). ``+a,+b,...`` adds to the default of the instance,
        None is that default (:func:`default_policies`); both are read once it is loaded.
    options : mapping
        The policy options, checked against the policies
        (:func:`lpsched.policies.selection.select_policies`).
    load : callable
        Returns the instance; called once.
    time_model : TimeModel, optional
        The time model of the comparison: the default policies and :func:`check_clock` depend
        on it.
    reserved : mapping, optional
        Options the caller sets itself, refused in ``options``, each with the reason shown.

    Returns
    -------
    tuple of (Instance, list of str)

    Raises
    ------
    lpsched.instance.OptionError
        A list or options refused by :func:`~lpsched.policies.selection.select_policies`.
    PolicySelectionError
        Policies that admit by arrival rounds on a clock (:func:`check_clock`).

    Notes
    -----
    Source: ours (``lpsched run``).
    """
    exact = text is not None and not text.strip().startswith("+")
    if exact:
        names = select_policies(text, options, reserved=reserved)
    instance = load()
    if not exact:
        default = default_policies(instance, time_model)
        names = select_policies(text, options, default=default, reserved=reserved)
    check_clock(instance, time_model, names)
    return instance, names

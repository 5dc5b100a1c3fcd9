"""Empirical approximation ratios against Sorted-F's proven bound 48, and a search for bad cases.

The seed paper (arXiv 2508.06133, section 4) proves ``TEL(Sorted-F) <= 48 OPT``; FCFS, MC-SF and
size priority have unbounded ratios (:mod:`lpsched.gadgets` builds families that show it). This
module measures what the ratios look like on small instances, where the optimum is known:

* :func:`small_instance` -- small random instances (``n <= 10``, ``M`` a few dozen tokens) from
  four workloads: ``uniform``, ``mix`` (the paper's 80/20 conversation/summarization mix, scaled
  down), ``heavy-prefill`` and ``heavy-decode``;
* :func:`ratio_sweep` -- for every instance the exact optimum (:func:`lpsched.exact.solve_exact`),
  the LP bound (:func:`lpsched.exact.lp_bound`) and ``TEL(policy) / OPT`` and
  ``TEL(policy) / LP`` for every policy; one CSV row per (instance, policy), resumable;
* :func:`adversarial_search` -- local search over small instances (change one ``s_i``, one
  ``o_i``, copy a request, or change ``M``; exact optimum at every step) that maximises
  ``TEL(policy) / OPT``, by default for Sorted-F;
* :func:`reproduce_ratios` / :func:`reproduce_families` -- the two reproductions (CSV + Markdown
  + PNG into a folder, returning the Markdown) for ``lpsched reproduce``.

Every ratio ``TEL / OPT`` uses the proven optimum when the solver proves it; otherwise the best
schedule's TEL (so the ratio is a lower bound on the true one) and the CSV says so.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .experiments import ResultsCSV, markdown_table, run_sweep
from .instance import Instance, write_instance
from .policies import parse_policy, run_policy
from .workloads import sample_lengths

__all__ = [
    "SMALL_WORKLOADS",
    "RATIO_POLICIES",
    "SORTED_F_BOUND",
    "small_instance",
    "OptimumCache",
    "ratio_sweep",
    "ratio_summary",
    "SearchResult",
    "adversarial_search",
    "save_adversarial",
    "catalogue_rows",
    "family_sweep",
    "reproduce_ratios",
    "reproduce_families",
]

#: Workloads of :func:`small_instance`.
SMALL_WORKLOADS = ("uniform", "mix", "heavy-prefill", "heavy-decode")
#: Policies compared by default (the offline list policies with known ``o_i``).
RATIO_POLICIES = ("fcfs", "mcsf", "size", "sorted-f", "sorted-lp")
#: The proven approximation ratio of Sorted-F (arXiv 2508.06133, section 4).
SORTED_F_BOUND = 48
#: Mean footprint ``s + o`` of the 80/20 mix in tokens (shipped tables, 20,000 draws).
_MIX_MEAN_SIZE = 1662.0

RATIO_FIELDS = [
    "workload",
    "n",
    "memory",
    "seed",
    "policy",
    "tel",
    "opt",
    "opt_status",
    "lower_bound",
    "lp_bound",
    "ratio_opt",
    "ratio_lp",
    "exact_s",
]


# ===================================================================================== instances
def small_instance(workload: str, n: int, memory: int, *, seed: int = 0) -> Instance:
    """A small random offline instance for exact ratio studies.

    Parameters
    ----------
    workload : {"uniform", "mix", "heavy-prefill", "heavy-decode"}
        ``uniform``: ``o_i`` uniform on ``1..max(1, M/4)``, ``s_i`` on ``0..M/2``.
        ``mix``: ``(s_i, o_i)`` drawn from the 80/20 conversation/summarization mix of
        :mod:`lpsched.workloads` and both scaled by ``c = M / (4 * 1662)`` (the mix's mean
        footprint is 1,662 tokens, so about four average requests fit in ``M``; the ratio
        ``s_i / o_i`` of the real mix is kept, hence mostly ``o_i`` in ``1..3``).
        ``heavy-prefill``: ``s_i`` on ``M/4..3M/4``, ``o_i`` on ``1..max(1, M/8)``.
        ``heavy-decode``: ``s_i`` on ``0..M/8``, ``o_i`` on ``M/4..M/2``.
    n : int
        Number of requests, ``>= 1``.
    memory : int
        KV-cache budget ``M`` in tokens, ``>= 2``.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    Instance
        Lengths rounded to integers, ``o_i >= 1``, and ``s_i`` cut to ``M - o_i`` where needed
        (so ``s_i + o_i <= M``); ``metadata`` records workload and seed.

    Raises
    ------
    ValueError
        Unknown workload, ``n < 1`` or ``memory < 2``.

    Notes
    -----
    Source: ours (the 80/20 mix is the paper's headline workload, section 6).
    """
    if workload not in SMALL_WORKLOADS:
        raise ValueError(
            f"unknown small workload {workload!r}; choose from {', '.join(SMALL_WORKLOADS)}"
        )
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if memory < 2:
        raise ValueError(f"memory M must be >= 2 tokens, got {memory}")
    rng = np.random.default_rng(seed)
    M = int(memory)
    if workload == "uniform":
        o = rng.integers(1, max(1, M // 4) + 1, size=n)
        s = rng.integers(0, M // 2 + 1, size=n)
    elif workload == "heavy-prefill":
        o = rng.integers(1, max(1, M // 8) + 1, size=n)
        s = rng.integers(M // 4, 3 * M // 4 + 1, size=n)
    elif workload == "heavy-decode":
        o = rng.integers(max(1, M // 4), max(1, M // 2) + 1, size=n)
        s = rng.integers(0, M // 8 + 1, size=n)
    else:
        s_big, o_big, _ = sample_lengths("mix-80-20", n, rng)
        c = M / (4 * _MIX_MEAN_SIZE)
        o = np.maximum(1, np.rint(o_big * c)).astype(np.int64)
        o = np.minimum(o, M)
        s = np.rint(s_big * c).astype(np.int64)
    o = np.asarray(o, dtype=np.int64)
    s = np.minimum(np.asarray(s, dtype=np.int64), M - o)
    return Instance.from_arrays(
        s,
        o,
        M,
        name=f"small-{workload}-n{n}-M{M}-s{seed}",
        metadata={"source": "lpsched.ratios.small_instance", "workload": workload, "seed": seed},
    )


# ======================================================================================= optimum
def _key(instance: Instance) -> tuple:
    return (
        instance.memory,
        tuple(instance.prefill.tolist()),
        tuple(instance.decode.tolist()),
        tuple(instance.arrival.tolist()),
    )


class OptimumCache:
    """Exact optima of small instances, memoised by their data.

    Parameters
    ----------
    solver : {"highs", "cpsat"}
        Back end of :func:`lpsched.exact.solve_exact`.
    time_limit : float
        Seconds per solve.

    Notes
    -----
    :meth:`get` returns ``(best TEL, proven lower bound, proven optimal)`` in rounds. When the
    trivial combinatorial bound (:func:`lpsched.bounds.combinatorial_value`) already equals the
    best heuristic TEL the MIP is skipped. Source: ours.
    """

    def __init__(self, solver: str = "highs", time_limit: float = 20.0) -> None:
        self.solver = solver
        self.time_limit = float(time_limit)
        self.store: dict[tuple, tuple[int, float, bool]] = {}
        self.solves = 0
        self.seconds = 0.0

    def get(self, instance: Instance) -> tuple[int, float, bool]:
        """``(objective, bound, optimal)`` of ``instance`` (rounds); see the class notes."""
        key = _key(instance)
        hit = self.store.get(key)
        if hit is not None:
            return hit
        from .exact import solve_exact

        t0 = time.perf_counter()
        res = solve_exact(instance, solver=self.solver, time_limit=self.time_limit)
        self.seconds += time.perf_counter() - t0
        self.solves += 1
        if res.objective is None:
            raise RuntimeError(
                f"{instance.name}: the exact solver found no schedule (status {res.status})"
            )
        out = (int(res.objective), float(res.bound), str(res.status) == "optimal")
        self.store[key] = out
        return out


# ========================================================================================= sweep
def ratio_sweep(
    out_path: str | os.PathLike[str],
    *,
    workloads: Sequence[str] = SMALL_WORKLOADS,
    sizes: Sequence[int] = (5, 7),
    memories: Sequence[int] = (16, 32),
    seeds: Sequence[int] = tuple(range(10)),
    policies: Sequence[str] = RATIO_POLICIES,
    solver: str = "highs",
    time_limit: float = 30.0,
    progress: bool = True,
) -> list[dict[str, str]]:
    """Empirical ratios ``TEL(policy) / OPT`` and ``TEL(policy) / LP`` on small instances.

    Parameters
    ----------
    out_path : path-like
        The CSV (resumed if it exists): one row per (workload, n, M, seed, policy) with columns
        ``tel``, ``opt`` (best TEL found by the exact solver), ``opt_status`` (``optimal`` or
        ``best-known``), ``lower_bound`` (solver's proven bound), ``lp_bound``, ``ratio_opt``,
        ``ratio_lp`` and ``exact_s`` (seconds of the exact solve).
    workloads : sequence of str
        Names of :data:`SMALL_WORKLOADS`.
    sizes, memories, seeds : sequence of int
        Request counts ``n``, budgets ``M`` (tokens) and seeds; the product is swept.
    policies : sequence of str
        Registry names (``+backfill`` allowed); unregistered names are skipped.
    solver : {"highs", "cpsat"}
        Exact back end.
    time_limit : float
        Seconds per exact solve.
    progress : bool
        Progress bar on standard error.

    Returns
    -------
    list of dict
        All rows of the CSV (strings). Every policy schedule is checked feasible.

    Notes
    -----
    ``ratio_opt >= 1`` always; ``ratio_lp >= ratio_opt`` since the LP value is a lower bound.
    Source: ours; the bound 48 is arXiv 2508.06133, section 4.
    """
    from .exact import lp_bound

    pols = list(policies)
    for p in pols:
        parse_policy(p)  # an unknown name fails here, before any solve
    results = ResultsCSV(out_path, RATIO_FIELDS, ["workload", "n", "memory", "seed", "policy"])
    cache = OptimumCache(solver, time_limit)

    def compute(task: Mapping[str, Any]):
        inst = small_instance(task["workload"], task["n"], task["memory"], seed=task["seed"])
        t0 = time.perf_counter()
        opt, bound, optimal = cache.get(inst)
        exact_s = time.perf_counter() - t0
        lp = lp_bound(inst).bound
        for policy in task["policies"]:
            tel = run_policy(inst, policy).check().tel
            yield {
                **task,
                "policy": policy,
                "tel": tel,
                "opt": opt,
                "opt_status": "optimal" if optimal else "best-known",
                "lower_bound": bound,
                "lp_bound": lp,
                "ratio_opt": tel / opt,
                "ratio_lp": tel / lp,
                "exact_s": exact_s,
            }

    tasks = []
    for w in workloads:
        for n in sizes:
            for M in memories:
                for seed in seeds:
                    key = {"workload": w, "n": n, "memory": M, "seed": seed}
                    todo = [p for p in pols if not results.done({**key, "policy": p})]
                    if todo:
                        tasks.append({**key, "policy": todo[0], "policies": todo})
    return run_sweep(tasks, compute, results, desc=Path(out_path).stem, progress=progress)


def ratio_summary(rows: Sequence[Mapping[str, Any]]) -> str:
    """Markdown table of a :func:`ratio_sweep`: per workload and policy, the number of
    instances, mean and max ``TEL / OPT``, the share solved optimally (ratio 1) and max
    ``TEL / LP``; a last block over all workloads. Source: ours."""
    by: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for r in rows:
        pair = (float(r["ratio_opt"]), float(r["ratio_lp"]))
        by.setdefault((r["workload"], r["policy"]), []).append(pair)
        by.setdefault(("all", r["policy"]), []).append(pair)
    out = []
    for (w, p), vals in by.items():
        ro = np.array([v[0] for v in vals])
        rl = np.array([v[1] for v in vals])
        out.append(
            {
                "workload": w,
                "policy": p,
                "instances": len(vals),
                "mean TEL/OPT": f"{ro.mean():.3f}",
                "max TEL/OPT": f"{ro.max():.3f}",
                "optimal share": f"{np.mean(ro <= 1 + 1e-9):.0%}",
                "max TEL/LP": f"{rl.max():.3f}",
            }
        )
    out.sort(key=lambda r: (r["workload"] == "all", r["workload"]))
    return markdown_table(
        out,
        [
            "workload",
            "policy",
            "instances",
            "mean TEL/OPT",
            "max TEL/OPT",
            "optimal share",
            "max TEL/LP",
        ],
    )


# ============================================================================ adversarial search
@dataclass
class SearchResult:
    """Outcome of :func:`adversarial_search`.

    Attributes
    ----------
    instance : Instance
        The worst instance found; ``metadata`` records ratio, optimum and how it was found.
    ratio : float
        ``TEL(policy) / OPT`` on it (``OPT`` the best TEL found by the solver; a lower bound on
        the true ratio when not proven optimal).
    tel : int
        ``TEL(policy)`` in rounds.
    opt : int
        Optimal (or best known) TEL in rounds.
    bound : float
        Proven lower bound on the optimal TEL (rounds).
    optimal : bool
        Whether ``opt`` is proven optimal.
    history : list of float
        Best ratio after every step (all restarts, in order).
    evaluations : int
        Instances evaluated (exact solves, cached ones included).
    runtime_s : float
        Wall time in seconds.
    call : str
        The Python call that reproduces the search.
    """

    instance: Instance
    ratio: float
    tel: int
    opt: int
    bound: float
    optimal: bool
    history: list[float] = field(default_factory=list, repr=False)
    evaluations: int = 0
    runtime_s: float = 0.0
    call: str = ""


def _mutate(
    s: np.ndarray, o: np.ndarray, M: int, rng: np.random.Generator, max_memory: int, max_decode: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """One random move; the result satisfies ``o_i >= 1``, ``s_i >= 0``, ``s_i + o_i <= M``."""
    s, o = s.copy(), o.copy()
    n = s.size
    move = rng.choice(["s", "o", "copy", "M"], p=[0.38, 0.38, 0.12, 0.12])
    i = int(rng.integers(n))
    step = int(rng.choice([1, 1, 2, 3, max(1, M // 4)]))
    sign = int(rng.choice([-1, 1]))
    if move == "s":
        s[i] = min(max(0, s[i] + sign * step), M - o[i])
    elif move == "o":
        o[i] = min(max(1, o[i] + sign * step), max_decode, M)
        s[i] = min(s[i], M - o[i])
    elif move == "copy":
        j = int(rng.integers(n))
        s[i], o[i] = s[j], o[j]
    else:
        M2 = min(max(2, M + sign * step), max_memory)
        if M2 < M:  # shrink the requests that no longer fit
            o = np.minimum(o, M2)
            s = np.minimum(s, M2 - o)
        M = M2
    return s, o, M


def adversarial_search(
    policy: str = "sorted-f",
    *,
    n: int = 5,
    memory: int = 12,
    steps: int = 150,
    restarts: int = 4,
    seed: int = 0,
    max_memory: int = 24,
    max_decode: int = 8,
    workload: str = "uniform",
    solver: str = "highs",
    time_limit: float = 10.0,
    temperature: float = 0.02,
    start: Instance | None = None,
) -> SearchResult:
    """Local search for a small instance that maximises ``TEL(policy) / OPT``.

    Parameters
    ----------
    policy : str
        Registry name of the policy attacked (default Sorted-F, whose ratio is proven
        ``<= 48``).
    n : int
        Requests per instance (fixed during the search).
    memory : int
        Initial budget ``M`` (tokens) of each random start.
    steps : int
        Moves per restart.
    restarts : int
        Independent starts (``small_instance(workload, n, memory, seed=seed + r)``).
    seed : int
        Seed of the starts and of the moves.
    max_memory : int
        Largest ``M`` the moves may reach (tokens; keeps the exact solves fast).
    max_decode : int
        Largest ``o_i`` the moves may reach (tokens).
    workload : str
        :data:`SMALL_WORKLOADS` name of the starts.
    solver : {"highs", "cpsat"}
        Exact back end; every step solves the new instance exactly (memoised).
    time_limit : float
        Seconds per exact solve (if the optimum is not proven, the best TEL found is used,
        which can only make the ratio smaller).
    temperature : float
        Simulated-annealing temperature on the ratio: a worse move is accepted with
        probability ``exp(-(loss) / temperature)``; 0 gives plain hill climbing (ties
        accepted).
    start : Instance, optional
        Start from this instance (first restart only) instead of a random one.

    Returns
    -------
    SearchResult
        The worst instance found over all restarts, with its ratio and provenance in
        ``instance.metadata`` (``ratio``, ``policy``, ``tel``, ``opt``, ``optimal``,
        ``lower_bound``, ``found_by``).

    Raises
    ------
    KeyError
        Unknown policy (the message lists the registered ones).
    ValueError
        Unknown workload, ``n < 1``, ``steps < 0`` or ``restarts < 1``.

    Notes
    -----
    Moves: change one ``s_i`` or ``o_i`` by ``+-1, 2, 3`` or ``M/4``; copy one request onto
    another; change ``M`` (shrinking requests that no longer fit). The policy's TEL comes from
    the registry (Sorted-F with its exact ``dp`` Phase 1 at these sizes), the optimum from
    :func:`lpsched.exact.solve_exact`. Source: ours.
    """
    parse_policy(policy)  # KeyError naming the registered policies
    if steps < 0 or restarts < 1:
        raise ValueError("steps must be >= 0 and restarts >= 1")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    cache = OptimumCache(solver, time_limit)
    evaluations = 0

    def evaluate(s, o, M) -> tuple[float, int, Instance]:
        nonlocal evaluations
        evaluations += 1
        inst = Instance.from_arrays(s, o, M, name="search")
        tel = run_policy(inst, policy).tel
        opt, _, _ = cache.get(inst)
        return tel / opt, tel, inst

    best: tuple[float, int, Instance] | None = None
    history: list[float] = []
    for r in range(restarts):
        if r == 0 and start is not None:
            inst0 = start
        else:
            inst0 = small_instance(workload, n, min(memory, max_memory), seed=seed + r)
        s, o, M = inst0.prefill.copy(), inst0.decode.copy(), inst0.memory
        cur = evaluate(s, o, M)
        if best is None or cur[0] > best[0]:
            best = cur
        for _ in range(steps):
            s2, o2, M2 = _mutate(s, o, M, rng, max_memory, max_decode)
            cand = evaluate(s2, o2, M2)
            loss = cur[0] - cand[0]
            if loss <= 0 or (temperature > 0 and rng.random() < math.exp(-loss / temperature)):
                s, o, M, cur = s2, o2, M2, cand
            if cand[0] > best[0]:
                best = cand
            history.append(best[0])
    assert best is not None
    ratio, tel, inst = best
    opt, bound, optimal = cache.get(inst)
    call = (
        f"adversarial_search({policy!r}, n={n}, memory={memory}, steps={steps}, "
        f"restarts={restarts}, seed={seed}, max_memory={max_memory}, "
        f"max_decode={max_decode}, workload={workload!r}, solver={solver!r}, "
        f"time_limit={time_limit}, temperature={temperature})"
    )
    name = f"adv-{policy}-n{inst.n}-M{inst.memory}-s{seed}"
    inst = inst.replace(
        name=name,
        metadata={
            "source": "lpsched.ratios.adversarial_search",
            "found_by": call,
            "policy": policy,
            "ratio": ratio,
            "tel": tel,
            "opt": opt,
            "optimal": optimal,
            "lower_bound": bound,
            "seed": seed,
        },
    )
    return SearchResult(
        inst, ratio, tel, opt, bound, optimal, history, evaluations, time.perf_counter() - t0, call
    )


def save_adversarial(
    result: SearchResult,
    out_dir: str | os.PathLike[str] = "instances/adversarial",
    name: str | None = None,
) -> Path:
    """Write the worst instance of a search as SPEC section 9 instance JSON.

    Parameters
    ----------
    result : SearchResult
    out_dir : path-like
        Folder (created if needed).
    name : str, optional
        File stem and instance name; default the instance's name.

    Returns
    -------
    Path
        The file written (``metadata`` holds ratio, optimum, bound, proof and the call).
    """
    inst = result.instance if name is None else result.instance.replace(name=name)
    path = Path(out_dir) / f"{inst.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_instance(inst, path)
    return path


def catalogue_rows(folder: str | os.PathLike[str] = "instances/adversarial") -> list[dict]:
    """Catalogue rows of the instance files in ``folder`` (for ``instances/README.md``).

    Returns
    -------
    list of dict
        Per file: ``name``, ``n``, ``M``, ``origin``, ``best known TEL``, ``lower bound``,
        ``proven optimal`` (from each file's ``metadata``: ``opt``, ``lower_bound``,
        ``optimal``, ``found_by``), plus ``ratio`` and ``policy``. Source: ours (the catalogue
        of ARCHITECTURE.md).
    """
    from .instance import read_instance

    rows = []
    for path in sorted(Path(folder).glob("*.json")):
        inst = read_instance(path)
        md = inst.metadata
        rows.append(
            {
                "name": inst.name,
                "n": inst.n,
                "M": inst.memory,
                "origin": md.get("found_by", md.get("source", "")),
                "best known TEL": md.get("opt"),
                "lower bound": md.get("lower_bound"),
                "proven optimal": "yes" if md.get("optimal") else "no",
                "ratio": md.get("ratio"),
                "policy": md.get("policy"),
            }
        )
    return rows


# ===================================================================================== families
FAMILY_FIELDS = ["family", "memory", "n", "policy", "tel", "good_tel", "ratio", "closed_form"]


def family_sweep(
    out_path: str | os.PathLike[str],
    *,
    memories: Sequence[int] = (16, 64, 256, 1024, 4096, 16384),
    families: Sequence[str] = ("fcfs", "mcsf", "size"),
    policies: Sequence[str] = ("fcfs", "mcsf", "size", "sorted-f"),
    progress: bool = True,
) -> list[dict[str, str]]:
    """TEL of every policy on every adversarial family instance, against the good schedule.

    Parameters
    ----------
    out_path : path-like
        The CSV (resumed): one row per (family, M, policy) with the executor's ``tel``, the good
        schedule's ``good_tel``, ``ratio = tel / good_tel`` and ``closed_form`` (for the
        family's own policy: the closed-form TEL, else empty).
    memories : sequence of int
        Budgets ``M`` (tokens).
    families : sequence of str
        Names of :data:`lpsched.gadgets.FAMILIES`.
    policies : sequence of str
        Registry names. Sorted-F runs its ``dp`` Phase 1 up to 40 requests, ``swap`` above.
    progress : bool
        Progress bar.

    Returns
    -------
    list of dict
        All rows of the CSV.

    Raises
    ------
    AssertionError
        If an executor TEL differs from its closed form (a bug, never expected).

    Notes
    -----
    Source: ours (families in :mod:`lpsched.gadgets`).
    """
    from .gadgets import FAMILIES, family_good_schedule, family_instance, family_tels

    results = ResultsCSV(out_path, FAMILY_FIELDS, ["family", "memory", "policy"])

    def compute(task: Mapping[str, Any]):
        inst = family_instance(task["family"], task["memory"])
        good = family_good_schedule(inst).tel
        closed_h, closed_g = family_tels(task["family"], task["memory"])
        assert good == closed_g
        for policy in task["policies"]:
            solver = "dp" if inst.n <= 40 else "swap"
            tel = run_policy(inst, policy, solver=solver).check().tel
            own = policy == FAMILIES[task["family"]].policy
            if own:
                assert tel == closed_h, (task, tel, closed_h)
            yield {
                **task,
                "policy": policy,
                "n": inst.n,
                "tel": tel,
                "good_tel": good,
                "ratio": tel / good,
                "closed_form": closed_h if own else "",
            }

    tasks = []
    for fam in families:
        for M in memories:
            key = {"family": fam, "memory": M}
            todo = [p for p in policies if not results.done({**key, "policy": p})]
            if todo:
                tasks.append({**key, "policy": todo[0], "policies": todo})
    return run_sweep(tasks, compute, results, desc=Path(out_path).stem, progress=progress)


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


# ================================================================================ reproductions
def reproduce_families(
    out_dir: str | os.PathLike[str],
    *,
    memories: Sequence[int] = (16, 64, 256, 1024, 4096, 16384),
    plot: bool = True,
    progress: bool = True,
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
    progress : bool
        Progress bar.

    Returns
    -------
    str
        Markdown: per family and ``M``, ``TEL(policy) / TEL(good)`` for every policy, then
        the closed forms. Source: ours (:mod:`lpsched.gadgets`).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = family_sweep(out / "families.csv", memories=memories, progress=progress)
    text = (
        "TEL(policy) / TEL(good schedule) on the adversarial families (executor runs):\n\n"
        + _family_table(rows)
        + "\n\nClosed forms (rounds): fcfs L = floor(sqrt M), q = "
        "floor(M/L): (L + q(L+1)) / (q + L + 1); mcsf q = floor(M/2), k = floor(sqrt 2M): "
        "(k(k+1)/2 + q(k+2)) / (2q + 2k + k(k+1)/2); size L = M-1, r = floor(sqrt 2L): "
        "(L + rL + r(r+1)/2) / (r(r+1)/2 + r + L).\n"
    )
    (out / "families.md").write_text(text)
    if plot:
        from .plotting import plot_families, save_figure

        save_figure(plot_families(rows), out / "families.png")
    return text


def reproduce_ratios(
    out_dir: str | os.PathLike[str],
    *,
    workloads: Sequence[str] = SMALL_WORKLOADS,
    sizes: Sequence[int] = (5, 7),
    memories: Sequence[int] = (16, 32),
    seeds: Sequence[int] = tuple(range(10)),
    policies: Sequence[str] = RATIO_POLICIES,
    search_steps: int = 150,
    search_restarts: int = 4,
    search_seed: int = 0,
    solver: str = "highs",
    time_limit: float = 30.0,
    save_to: str | os.PathLike[str] | None = None,
    plot: bool = True,
    progress: bool = True,
) -> str:
    """Reproduction ``ratios``: empirical ratios on small instances against the bound 48.

    Parameters
    ----------
    out_dir : path-like
        Writes ``ratios.csv`` (:func:`ratio_sweep`), ``adversarial.csv`` (one row per search
        restart budget, resumable), ``adversarial-sorted-f.json`` (the worst instance),
        ``ratios.md`` and, with ``plot``, ``ratios.png``.
    workloads, sizes, memories, seeds, policies, solver, time_limit
        See :func:`ratio_sweep`.
    search_steps, search_restarts, search_seed : int
        Budget and seed of :func:`adversarial_search` against Sorted-F (``search_restarts =
        0`` skips it).
    save_to : path-like, optional
        Also copy the worst instance there (e.g. ``instances/adversarial``).
    plot : bool
        Write the PNG (ratio distribution per policy, log scale, line at 48).
    progress : bool
        Progress bar.

    Returns
    -------
    str
        Markdown: the summary table (:func:`ratio_summary`) and the worst Sorted-F instance.
        Source: ours; bound 48 from arXiv 2508.06133, section 4.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = ratio_sweep(
        out / "ratios.csv",
        workloads=workloads,
        sizes=sizes,
        memories=memories,
        seeds=seeds,
        policies=policies,
        solver=solver,
        time_limit=time_limit,
        progress=progress,
    )
    parts = [
        f"TEL(policy) / OPT on {len(rows) // max(1, len(policies))} small "
        f"instances (proven bound for Sorted-F: {SORTED_F_BOUND}):\n",
        ratio_summary(rows),
    ]
    if search_restarts > 0:
        adv = ResultsCSV(
            out / "adversarial.csv",
            [
                "policy",
                "steps",
                "restarts",
                "seed",
                "ratio",
                "tel",
                "opt",
                "optimal",
                "n",
                "memory",
                "prefill",
                "decode",
                "evaluations",
                "runtime_s",
            ],
            ["policy", "steps", "restarts", "seed"],
        )

        def compute(task: Mapping[str, Any]):
            res = adversarial_search(
                "sorted-f",
                steps=task["steps"],
                restarts=task["restarts"],
                seed=task["seed"],
                solver=solver,
                time_limit=min(time_limit, 10.0),
            )
            path = out / "adversarial-sorted-f.json"
            write_instance(res.instance.replace(name="adversarial-sorted-f"), path)
            if save_to is not None:
                save_adversarial(res, save_to)
            inst = res.instance
            yield {
                **task,
                "ratio": res.ratio,
                "tel": res.tel,
                "opt": res.opt,
                "optimal": res.optimal,
                "n": inst.n,
                "memory": inst.memory,
                "prefill": json.dumps(inst.prefill.tolist()),
                "decode": json.dumps(inst.decode.tolist()),
                "evaluations": res.evaluations,
                "runtime_s": res.runtime_s,
            }

        task = {
            "policy": "sorted-f",
            "steps": search_steps,
            "restarts": search_restarts,
            "seed": search_seed,
        }
        arows = run_sweep([task], compute, adv, desc="adversarial", progress=progress)
        r = arows[-1]
        parts.append(
            f"\nWorst TEL(sorted-f) / OPT found by adversarial_search(steps={r['steps']}, "
            f"restarts={r['restarts']}, seed={r['seed']}): **{float(r['ratio']):.4f}** "
            f"(TEL {r['tel']} against OPT {r['opt']}, proven optimal: {r['optimal']}) on "
            f"n = {r['n']}, M = {r['memory']}, s = {r['prefill']}, o = {r['decode']} "
            f"({r['evaluations']} evaluations, {float(r['runtime_s']):.1f} s)."
        )
    text = "\n".join(parts) + "\n"
    (out / "ratios.md").write_text(text)
    if plot:
        from .plotting import plot_ratio_distribution, save_figure

        worst = None
        if search_restarts > 0:
            worst = {"sorted-f": float(arows[-1]["ratio"])}
        save_figure(plot_ratio_distribution(rows, worst=worst), out / "ratios.png")
    return text

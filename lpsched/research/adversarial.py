"""A local search for small instances on which a policy is far from optimal.

:func:`adversarial_search` changes one ``s_i``, one ``o_i``, copies a request or changes ``M``,
with the exact optimum at every step, and keeps the worst ``TEL(policy) / OPT`` found (by
default for Sorted-F, whose ratio is proven to be at most 48; arXiv 2508.06133, section 4).
:func:`save_adversarial` and :func:`catalogue_rows` keep and list the instances found
(``instances/adversarial``). Source: ours.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..generators.small import small_instance
from ..instance import Instance
from ..io import read_instance, write_instance
from ..policies.registry import parse_policy, run_policy
from ..sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds
from .cache import OptimumCache

__all__ = [
    "SearchResult",
    "MOVE_DRAWS",
    "adversarial_search",
    "save_adversarial",
    "catalogue_rows",
    "ADVERSARIAL_FIELDS",
    "search_row",
]


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


#: Draws of a move before a step of :func:`adversarial_search` gives up on its assumption.
MOVE_DRAWS = 50


def _allowed_move(
    s: np.ndarray,
    o: np.ndarray,
    M: int,
    rng: np.random.Generator,
    max_memory: int,
    max_decode: int,
    meets: Callable[[Instance], bool] | None,
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """A random move whose instance meets ``meets`` (any move without it); None when
    :data:`MOVE_DRAWS` draws all break it."""
    for _ in range(MOVE_DRAWS if meets is not None else 1):
        s2, o2, M2 = _mutate(s, o, M, rng, max_memory, max_decode)
        if meets is None or meets(Instance.from_arrays(s2, o2, M2, name="search")):
            return s2, o2, M2
    return None


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
    workload: str | Sequence[str] = "uniform",
    solver: str = "highs",
    time_limit: float = 10.0,
    temperature: float = 0.02,
    start: Instance | None = None,
    progress: bool | Callable[[int, int, float], None] = False,
    meets: Callable[[Instance], bool] | None = None,
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
    workload : str or sequence of str
        :func:`~lpsched.generators.small.small_instance` workload of the starts; several:
        restart ``r`` starts from the ``r``-th, cyclically.
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
    progress : bool or callable, default False
        True: a progress bar (``tqdm.auto``: on standard error, or a widget in a notebook)
        over the ``restarts * (steps + 1)`` exact solves, showing the best ratio so far. A
        callable is called after every solve as ``progress(done, total, best_ratio)``.
    meets : callable, optional
        ``meets(instance) -> bool``: the assumption every instance of the search must meet
        (a theorem's, :data:`~lpsched.research.reproductions.theorems.THEOREMS`). Every
        start must meet it; a move whose instance does not is drawn again, up to
        :data:`MOVE_DRAWS` times, and the step evaluates nothing new when none meets it.

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
        Unknown workload, ``n < 1``, ``steps < 0`` or ``restarts < 1``; a start that does
        not meet ``meets``.

    Notes
    -----
    Moves: change one ``s_i`` or ``o_i`` by ``+-1, 2, 3`` or ``M/4``; copy one request onto
    another; change ``M`` (shrinking requests that no longer fit). The policy's TEL comes from
    the registry (Sorted-F with its exact ``dp`` Phase 1 at these sizes), the optimum from
    :func:`lpsched.certify.solve_exact`. Source: ours.
    """
    parse_policy(policy)  # KeyError naming the registered policies
    if steps < 0 or restarts < 1:
        raise ValueError("steps must be >= 0 and restarts >= 1")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    cache = OptimumCache(solver, time_limit)
    evaluations = 0
    total = restarts * (steps + 1)
    bar = None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=f"adversarial {policy}", unit="solve", leave=False)

    best: tuple[float, int, Instance] | None = None

    def evaluate(s, o, M) -> tuple[float, int, Instance]:
        nonlocal evaluations
        evaluations += 1
        inst = Instance.from_arrays(s, o, M, name="search")
        tel = run_policy(inst, policy).tel
        opt, _, _ = cache.get(inst)
        ratio = tel / opt
        shown = max(ratio, best[0]) if best is not None else ratio
        if bar is not None:
            bar.update(1)
            bar.set_postfix(best_ratio=f"{shown:.4f}", refresh=False)
        elif callable(progress):
            progress(evaluations, total, shown)
        return ratio, tel, inst

    history: list[float] = []
    try:
        for r in range(restarts):
            if r == 0 and start is not None:
                inst0 = start
            else:
                starts = (workload,) if isinstance(workload, str) else tuple(workload)
                inst0 = small_instance(
                    starts[r % len(starts)], n, min(memory, max_memory), seed=seed + r
                )
            if meets is not None and not meets(inst0):
                raise ValueError(f"the start {inst0.name} does not meet the search's assumption")
            s, o, M = inst0.prefill.copy(), inst0.decode.copy(), inst0.memory
            cur = evaluate(s, o, M)
            if best is None or cur[0] > best[0]:
                best = cur
            for _ in range(steps):
                move = _allowed_move(s, o, M, rng, max_memory, max_decode, meets)
                if move is None:
                    history.append(best[0])
                    continue
                s2, o2, M2 = move
                cand = evaluate(s2, o2, M2)
                loss = cur[0] - cand[0]
                if loss <= 0 or (temperature > 0 and rng.random() < math.exp(-loss / temperature)):
                    s, o, M, cur = s2, o2, M2, cand
                if cand[0] > best[0]:
                    best = cand
                history.append(best[0])
    finally:
        if bar is not None:
            bar.close()
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
            "source": "lpsched.research.adversarial.adversarial_search",
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
        of ``instances/README.md``).
    """
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


#: The parameters of a search: the key of its row in ``adversarial.csv``.
_SEARCH_KEY = ["policy", "steps", "restarts", "seed"]
#: The columns of ``adversarial.csv``: a search's parameters, then what it found.
ADVERSARIAL_FIELDS = [
    *_SEARCH_KEY,
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
]


def search_row(
    out_dir: str | os.PathLike[str],
    *,
    policy: str = "sorted-f",
    steps: int = 150,
    restarts: int = 4,
    seed: int = 0,
    solver: str = "highs",
    time_limit: float = 10.0,
    save_to: str | os.PathLike[str] | None = None,
    workload: str | Sequence[str] = "uniform",
    meets: Callable[[Instance], bool] | None = None,
    name: str = "adversarial",
    **engine: Any,
) -> dict[str, str]:
    """One :func:`adversarial_search`, as a resumable sweep row of ``out_dir/adversarial.csv``.

    Writes the worst instance to ``out_dir/NAME-POLICY.json`` (and, with ``save_to``,
    into that folder by :func:`save_adversarial`). ``workload`` and ``meets`` are those of
    :func:`adversarial_search` (a search under a theorem's assumption); ``name`` is the CSV's
    stem (``NAME.csv``; give each ``workload`` and ``meets`` a name of its own, as they are
    not in the row's key). The search is one task and writes files, so
    it always runs in this process; of the ``engine`` options
    (:func:`~lpsched.sweeps.engine.run_sweep`) ``workers`` and ``scheduler`` are ignored.

    Returns
    -------
    dict
        The row (columns :data:`ADVERSARIAL_FIELDS`, values as strings). Source: ours.
    """
    out = Path(out_dir)

    def compute(params: Mapping[str, Any], missing: list[dict[str, Any]]) -> Iterator[dict]:
        res = adversarial_search(
            params["policy"],
            steps=params["steps"],
            restarts=params["restarts"],
            seed=params["seed"],
            solver=solver,
            time_limit=time_limit,
            workload=workload,
            meets=meets,
        )
        write_instance(res.instance.replace(name=f"{name}-{policy}"), out / f"{name}-{policy}.json")
        if save_to is not None:
            save_adversarial(res, save_to)
        inst = res.instance
        yield {
            **params,
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

    task = Task({"policy": policy, "steps": steps, "restarts": restarts, "seed": seed})
    sweep = Sweep(
        name,
        ADVERSARIAL_FIELDS,
        _SEARCH_KEY,
        [task],
        compute,
        params={"solver": solver, "time_limit": time_limit},
        types={
            "ratio": finite_float,
            "tel": int,
            "opt": int,
            "n": int,
            "memory": int,
            "runtime_s": seconds,
        },
        check=_check_row,
    )
    local = {k: v for k, v in engine.items() if k not in ("workers", "scheduler")}
    return run_sweep(sweep, out, **local)[-1]


def _check_row(v: Mapping[str, Any]) -> str | None:
    """A row read back must be possible: ``TEL >= OPT >= 1`` and ``ratio = TEL / OPT``."""
    if not v["tel"] >= v["opt"] >= 1 or abs(v["ratio"] - v["tel"] / v["opt"]) > 1e-4:
        return f"ratio {v['ratio']} with TEL {v['tel']} and OPT {v['opt']} is impossible"
    return None

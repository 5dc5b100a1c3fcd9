"""SVF's burst (arXiv 2606.22327's experiment), a part of the ``algorithms`` reproduction.

2,000 requests of LMSYS-Chat-1M, all at time 0, queued by FCFS, SJF, SVF and 1-bit SVF in vLLM
on A100s, in the paper. Here: ``n`` requests of ``lmsys-turn`` (the per-turn LMSYS reading,
heterogeneous prompts) at each budget M, all at round 0, run by the schedulers of
:data:`BURST_SCHEDULERS`: the four queues of the paper under vLLM-style admission (current
memory, recompute preemption: :func:`~lpsched.policies.vllm.execute_preemptive`), SVF as
published (peak reservation), lpsched's look-ahead list policies and the blind policies of
SPEC section 11 that this lpsched registers (:data:`BLIND_BURST`; their kills counted as
preemptions). Each schedule is read in
rounds and in seconds under the fitted time profiles (Llama-2-7B on one A100 and Llama-2-70B on
two, SPEC section 10); rows in ``algorithms-burst.csv``. The paper's LongBench workload and its
Llama-3.1 profiles are not available here.

Our reading, where the sources leave a choice:

* 1-bit SVF (:func:`one_bit_volume_order`): with ``T = max_i o_i``, a request is *short* when
  ``o_i <= sqrt(T)``; its volume is computed with the surrogate ``O_0 = T^(1/4)`` (short) or
  ``O_1 = T^(3/4)`` (long) in place of ``o_i``, ties by index (the theory's choices, as
  summarised; the experiments' thresholds were not recovered);
* the budgets: M = 16,492 (the seed paper's) and 65,536 (a larger cache, inside the profiles'
  fitted range), not the A100's; per-token latency is the mean over requests of
  ``latency_i / o_i`` (vLLM's normalised latency), in rounds and in seconds.

Source: ours; arXiv 2606.22327 as cited.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from ...generators.workloads import generate
from ...instance import Instance
from ...policies.registry import POLICIES, run_policy
from ...policies.svf import volume_order
from ...policies.vllm import execute_preemptive
from ...schedule import Schedule
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds
from ...sweeps.tables import markdown_table
from ...timing import parse_time_model, to_seconds
from .algorithm_claims import TOLD

__all__ = [
    "BURST_SCHEDULERS",
    "BLIND_BURST",
    "BURST_TIME_MODELS",
    "BURST_WORKLOAD",
    "one_bit_volume_order",
    "burst_table",
    "burst_section",
]

_LENGTHS = "decode lengths o_i"


def one_bit_volume_order(instance: Instance) -> np.ndarray:
    """1-bit SVF's queue: requests by the volume of a surrogate decode length, then index.

    Parameters
    ----------
    instance : Instance
        Its ``s_i`` and, of each ``o_i``, only whether it is short.

    Returns
    -------
    ndarray of int64, shape (n,)
        With ``T = max_i o_i``: a request is short when ``o_i <= sqrt(T)`` and gets the
        surrogate ``O_0 = T^(1/4)``, else ``O_1 = T^(3/4)``; the queue is by ``s_i O +
        O (O + 1) / 2`` ascending, then index.

    Notes
    -----
    Only the class (one bit) of each ``o_i`` is used. Source: 1-bit SVF of arXiv 2606.22327
    as summarised (threshold and surrogates of its theory); the run in the burst is ours.
    """
    o = instance.decode.astype(np.float64)
    T = float(o.max()) if instance.n else 1.0
    surrogate = np.where(o <= math.sqrt(T), T**0.25, T**0.75)
    s = instance.prefill.astype(np.float64)
    v = s * surrogate + surrogate * (surrogate + 1) / 2
    return np.lexsort((np.arange(instance.n), v)).astype(np.int64)


def _vllm_queue(order: Callable[[Instance], np.ndarray], label: str):
    def run(instance: Instance) -> Schedule:
        return execute_preemptive(instance, order(instance), policy=label)

    return run


#: The burst's schedulers: key -> (the paper's label, what it is, what it is told, run).
BURST_SCHEDULERS: dict[str, tuple[str, str, str, Callable[[Instance], Schedule]]] = {
    "vllm": (
        "FCFS",
        "FCFS queue, vLLM admission (current memory, recompute preemption)",
        "nothing",
        partial(run_policy, spec="vllm"),
    ),
    "vllm-sf": (
        "SJF",
        "queue by o_i, vLLM admission",
        _LENGTHS,
        partial(run_policy, spec="vllm-sf"),
    ),
    "vllm-volume": (
        "SVF",
        "queue by volume v_i, vLLM admission",
        _LENGTHS,
        _vllm_queue(volume_order, "vllm-volume"),
    ),
    "vllm-volume-1bit": (
        "1-bit SVF",
        "queue by the volume of a 1-bit surrogate, vLLM admission",
        "a 1-bit class",
        _vllm_queue(one_bit_volume_order, "vllm-volume-1bit"),
    ),
    "svf": (
        "SVF (theorem's rule)",
        "queue by volume, peak reservation s_i + o_i, head-of-line",
        _LENGTHS,
        partial(run_policy, spec="svf"),
    ),
    "volume": (
        "-",
        "list by volume, lpsched's look-ahead executor",
        _LENGTHS,
        partial(run_policy, spec="volume"),
    ),
    "mcsf": (
        "-",
        "list by o_i (MC-SF), look-ahead executor",
        _LENGTHS,
        partial(run_policy, spec="mcsf"),
    ),
    "sorted-f": (
        "-",
        "Sorted-F (Phase 1 swap), look-ahead executor",
        _LENGTHS,
        partial(run_policy, spec="sorted-f", solver="swap"),
    ),
    "fcfs": ("-", "FCFS list, look-ahead executor", "nothing", partial(run_policy, spec="fcfs")),
}
#: The blind policies of SPEC section 11 (lpsched's executor for them, kill and restart), added
#: to the burst when this lpsched registers them: name -> (the paper's label, what it is).
BLIND_BURST: dict[str, tuple[str, str]] = {
    "gsa": ("GSA", "geometric slices on a staggered pipeline, kill and restart"),
    "gsa-spec": ("GSA-Spec", "GSA plus speculative attempts in idle memory"),
    "svf-1bit": ("1-bit SVF (blind executor)", "surrogate volume queue, peak reservation"),
    "rect": ("Rect", "area-budget queue, doubling caps, kill and restart"),
    "response": ("Response", "doubling caps on a staggered pipeline, kill and restart"),
    "route": ("Route", "Rect / Response by regime, doubling stages"),
}
BURST_SCHEDULERS.update(
    {
        name: (label, what, TOLD[name], partial(run_policy, spec=name))
        for name, (label, what) in BLIND_BURST.items()
        if name in POLICIES
    }
)
#: The fitted time profiles the burst is read in (SPEC section 10).
BURST_TIME_MODELS = ("llama2-7b-a100x1", "llama2-70b-a100x2")
#: The burst's workload (the per-turn LMSYS reading, heterogeneous prompts).
BURST_WORKLOAD = "lmsys-turn"
BURST_FIELDS = [
    "memory",
    "seed",
    "scheduler",
    "time_model",
    "n",
    "tel",
    "mean_latency",
    "mean_token_latency",
    "mean_latency_s",
    "mean_token_latency_s",
    "p99_latency_s",
    "preemptions",
    "runtime_s",
]
BURST_KEY = ["memory", "seed", "scheduler", "time_model"]
#: How the numeric columns of :data:`BURST_FIELDS` are read back.
_BURST_TYPES: dict[str, Callable[[str], Any]] = {
    "memory": int,
    "n": int,
    "tel": int,
    "mean_latency": finite_float,
    "mean_token_latency": finite_float,
    "mean_latency_s": finite_float,
    "mean_token_latency_s": finite_float,
    "p99_latency_s": finite_float,
    "preemptions": int,
    "runtime_s": seconds,
}


def _burst_rows(
    params: Mapping[str, Any], missing: list[dict[str, Any]], *, n: int
) -> Iterator[dict[str, Any]]:
    """One burst instance: each missing scheduler once, read in each missing time model."""
    inst = generate(BURST_WORKLOAD, n, params["memory"], seed=params["seed"])
    o = inst.decode.astype(np.float64)
    schedules: dict[str, tuple[Schedule, float]] = {}
    models: dict[str, Any] = {}
    for key in missing:
        name, model = key["scheduler"], key["time_model"]
        if name not in schedules:
            t0 = time.perf_counter()
            sched = BURST_SCHEDULERS[name][3](inst).check()
            schedules[name] = (sched, time.perf_counter() - t0)
        sched, secs = schedules[name]
        if model not in models:
            models[model] = parse_time_model(model)
        sec = to_seconds(sched, models[model])
        latency = sched.completion - inst.arrival
        yield {
            **key,
            "n": n,
            "tel": sched.tel,
            "mean_latency": sched.mean_latency,
            "mean_token_latency": float(np.mean(latency / o)),
            "mean_latency_s": float(sec.latency_s.mean()),
            "mean_token_latency_s": float(np.mean(sec.latency_s / o)),
            "p99_latency_s": sec.stats()["p99_latency_s"],
            # a blind policy's kills are its preemptions
            "preemptions": int(sched.info.get("preemptions", sched.info.get("kills", 0))),
            "runtime_s": secs,
        }


def _check_burst_row(v: Mapping[str, Any]) -> str | None:
    """A burst row read back: TEL >= n, the mean latency TEL / n, positive seconds."""
    if v["tel"] < v["n"]:
        return f"TEL {v['tel']} below n = {v['n']}"
    if abs(v["mean_latency"] - v["tel"] / v["n"]) > 1e-4 * v["mean_latency"]:
        return f"mean_latency {v['mean_latency']} is not TEL / n"
    if not (v["mean_latency_s"] > 0 and v["mean_token_latency_s"] > 0):
        return "latencies in seconds must be positive"
    return None


def burst_table(rows: Sequence[Mapping[str, str]], schedulers: Sequence[str]) -> str:
    """Markdown: SVF's burst, one table per budget M: per scheduler, mean latency and mean
    per-token latency in rounds and, per time model, in seconds (means over the seeds).
    Source: ours."""
    models = list(dict.fromkeys(r["time_model"] for r in rows))
    memories = sorted({int(r["memory"]) for r in rows})
    parts = []
    for M in memories:
        out = []
        base = None
        for name in schedulers:
            rs = [r for r in rows if int(r["memory"]) == M and r["scheduler"] == name]
            if not rs:
                continue
            label, what, told, _ = BURST_SCHEDULERS[name]
            first = [r for r in rs if r["time_model"] == models[0]]
            mean_lat = np.mean([float(r["mean_latency"]) for r in first])
            if base is None:
                base = mean_lat
            row: dict[str, Any] = {
                "scheduler": name,
                "paper's name": label,
                "what": what,
                "told": told,
                "mean latency (rounds)": f"{mean_lat:,.0f}",
                "/ first row": f"{mean_lat / base:.3f}",
                "rounds / token": f"{np.mean([float(r['mean_token_latency']) for r in first]):.2f}",
                "preemptions": f"{np.mean([int(r['preemptions']) for r in first]):,.0f}",
            }
            for m in models:
                mr = [r for r in rs if r["time_model"] == m]
                row[f"{m}: mean s"] = f"{np.mean([float(r['mean_latency_s']) for r in mr]):.1f}"
                row[f"{m}: s / token"] = (
                    f"{np.mean([float(r['mean_token_latency_s']) for r in mr]):.3f}"
                )
            out.append(row)
        seeds = sorted({int(r["seed"]) for r in rows if int(r["memory"]) == M})
        n = rows[0]["n"]
        headers = [
            "scheduler",
            "paper's name",
            "what",
            "told",
            "mean latency (rounds)",
            "/ first row",
            "rounds / token",
            "preemptions",
            *(f"{m}: {c}" for m in models for c in ("mean s", "s / token")),
        ]
        parts.append(
            f"M = {M:,} tokens, n = {n} ({BURST_WORKLOAD}), all at round 0, seeds "
            f"{', '.join(map(str, seeds))} (means):\n\n"
            + markdown_table(out, headers, numparse=False)
        )
    return "\n\n".join(parts) + (
        "\n\nPer-token latency: the mean over requests of latency / o_i (vLLM's normalised "
        "latency). Seconds: the same schedules read under the fitted time profiles (SPEC "
        "section 10). The paper's LongBench workload and its Llama-3.1-8B / 70B profiles are "
        "not available here; its own figures (Llama-3.1-8B, LMSYS burst: SVF 0.89 s/token, "
        "SJF 1.01, FCFS 2.46) are real vLLM runs on A100s."
    )


def burst_section(
    out: str | os.PathLike[str],
    *,
    seeds: Sequence[int],
    n: int,
    memories: Sequence[int],
    time_models: Sequence[str] = BURST_TIME_MODELS,
    **engine: Any,
) -> str:
    """Run SVF's burst as a resumable sweep and return its Markdown section.

    Parameters
    ----------
    out : path-like
        Folder of ``algorithms-burst.csv`` (rows written as they finish; a rerun computes only
        what is missing).
    seeds : sequence of int
        Seeds of the ``lmsys-turn`` instances.
    n : int
        Requests of each instance.
    memories : sequence of int
        Budgets M (tokens).
    time_models : sequence of str
        Time models (registry specs) each schedule is read in.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep`.

    Returns
    -------
    str
        A ``## SVF's burst`` section: :func:`burst_table` of the rows.

    Notes
    -----
    Source: ours.
    """
    names = list(BURST_SCHEDULERS)
    tasks = [
        Task(
            {"memory": m, "seed": s},
            tuple({"scheduler": k, "time_model": tm} for k in names for tm in time_models),
        )
        for m in memories
        for s in seeds
    ]
    rows = run_sweep(
        Sweep(
            "algorithms-burst",
            BURST_FIELDS,
            BURST_KEY,
            tasks,
            partial(_burst_rows, n=n),
            params={"n": n, "workload": BURST_WORKLOAD},
            types=_BURST_TYPES,
            check=_check_burst_row,
        ),
        out,
        **engine,
    )
    return (
        "## SVF's burst (arXiv 2606.22327's experiment, in rounds and in seconds)\n\n"
        + burst_table(rows, names)
    )

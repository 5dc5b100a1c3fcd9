"""Reproduction ``online-load``: online FCFS, MC-SF and receding-horizon Sorted-F from light load
to overload, with Poisson arrivals on the paper's mix and with the Azure conversation trace's
own arrivals (and lengths).

With a time model (``time_model=``, ``lpsched reproduce online-load --time-model NAME``) the
study runs in seconds (SPEC section 10): arrivals in seconds (``arrival_s``), the policies
admitting on the model's clock, latencies in seconds from arrival. The load is measured in
seconds: ``rho = lambda_s d_bar / capacity`` with ``lambda_s`` the arrival rate (requests per
second), ``capacity`` the nominal capacity in requests per round and ``d_bar`` the mean round
duration of offline Sorted-F on the same requests under the model
(:func:`~lpsched.generators.arrivals.seconds_capacity`): ``rho = 1`` is the rate at which the
cache is full on average with rounds as long as when it is full. Poisson arrivals are the same
exponential draws as the round table's, in seconds and unrounded. The rows go to
``online-load-seconds.csv``; the rows in rounds are untouched.

Source: ours (SPEC sections 5 and 10).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...datasets import cached_trace_dir, skipped
from ...generators.arrivals import nominal_capacity, seconds_capacity, trace_window
from ...generators.workloads import PAPER_WORKLOAD, generate
from ...instance import Instance
from ...io import read_trace_csv, require_files
from ...policies.registry import run_policy
from ...schedule import latency_stats
from ...sweeps.checks import RowRules
from ...sweeps.engine import Sweep, Task, finite_float, run_sweep, seconds
from ...sweeps.provenance import trace_identity
from ...sweeps.tables import markdown_table, mean_by, report_path, reproduction_run, write_report
from ...timing import TimeModel, parse_time_model, round_loads, to_seconds

__all__ = ["NAME", "DESCRIPTION", "ONLINE_POLICIES", "TRACE_FILE", "SECONDS_NAME", "run"]

NAME = "online-load"
DESCRIPTION = (
    "online load sweep: receding-horizon Sorted-F against MC-SF and FCFS, Poisson and trace "
    "arrivals"
)
ONLINE_POLICIES = ("online-fcfs", "online-mcsf", "online-sorted-f")
_SHORT = {"online-fcfs": "FCFS", "online-mcsf": "MC-SF", "online-sorted-f": "RH-SF"}
#: The columns of both tables before their figures: the task, its size and the policy.
_RUN_FIELDS = ["source", "load", "seed", "n", "memory", "policy"]
#: The figures of :func:`~lpsched.schedule.latency_stats` in the table in rounds.
_ROUND_STATS = (
    "mean_latency",
    "p50_latency",
    "p90_latency",
    "p99_latency",
    "throughput",
    "makespan",
)
ONLINE_FIELDS = [*_RUN_FIELDS, "rate", "round_ms", *_ROUND_STATS, "replans", "runtime_s"]
TRACE_FILE = "splitwise_conv.csv"
#: The sweep (and CSV) of the study in seconds.
SECONDS_NAME = "online-load-seconds"
SECONDS_FIELDS = [
    *_RUN_FIELDS,
    "rate_s",
    "round_ms",
    "time_scale",
    "mean_latency_s",
    "p50_latency_s",
    "p90_latency_s",
    "p99_latency_s",
    "mean_ttft_s",
    "throughput_s",
    "makespan_s",
    "busy_round_ms",
    "prefill_per_round",
    "decoding_per_round",
    "mean_latency",
    "replans",
    "runtime_s",
]


@dataclass(frozen=True)
class _Setting:
    """What every task of a run shares: requests per run ``n``, the budget ``memory``
    (tokens), Sorted-F's Phase-1 ``solver``, the trace folder (None: no trace source) and the
    workload of the source ``poisson``."""

    n: int
    memory: int
    solver: str
    trace_dir: Path | None
    workload: str = PAPER_WORKLOAD

    def poisson(self, seed: int) -> Instance:
        """The requests of the source ``poisson``, all at round 0."""
        return generate(self.workload, self.n, self.memory, seed=seed)

    def trace(self, seed: int) -> tuple[Path, np.ndarray, np.ndarray, np.ndarray | None, int]:
        """The trace file, its lengths ``s, o`` and arrivals ``t``, and the offset of window
        ``seed`` (``3 n seed`` modulo the rows)."""
        assert self.trace_dir is not None
        path = self.trace_dir / TRACE_FILE
        s, o, t = read_trace_csv(path)
        return path, s, o, t, (seed * 3 * self.n) % max(1, s.size - self.n)


def _task(params: Mapping[str, Any]) -> tuple[str, float, int]:
    """A task's ``(source, load, seed)``."""
    return params["source"], float(params["load"]), params["seed"]


def _online_instance(
    setting: _Setting, source: str, load: float, seed: int
) -> tuple[Instance, float, float]:
    """Instance at nominal load ``load``; returns (instance, rate per round, round ms or nan)."""
    n, memory = setting.n, setting.memory
    if source == "poisson":
        base = setting.poisson(seed)
        rate = load * nominal_capacity(base.prefill, base.decode, memory)
        inst = generate(setting.workload, n, memory, seed=seed, arrival_rate=rate)
        return inst, rate, float("nan")
    path, s, o, _, offset = setting.trace(seed)
    rate = load * nominal_capacity(s[offset : offset + n], o[offset : offset + n], memory)
    inst = trace_window(path, n, memory, offset=offset, rate=rate)
    return inst, rate, 1000.0 * inst.metadata["round_s"]


@reproduction_run
def run(
    out_dir: str | os.PathLike[str],
    *,
    seeds: Sequence[int] = (0, 1, 2),
    n: int = 2000,
    memory: int = 16492,
    loads: Sequence[float] = (0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0),
    trace_dir: str | os.PathLike[str] | None = None,
    solver: str = "auto",
    workload: str = PAPER_WORKLOAD,
    time_model: TimeModel | str | None = None,
    **engine: Any,
) -> str:
    """Online FCFS, MC-SF and receding-horizon Sorted-F from light load to overload.

    Parameters
    ----------
    out_dir : path-like
        Writes ``online-load.csv`` (one row per source, load, seed and policy; resumed),
        ``online-load.md`` and ``online-load-<source>.png`` (mean and p99 latency against load).
    seeds : sequence of int
        Poisson: instance seeds. Trace: window ``seed`` of ``n`` consecutive rows (offset
        ``3 n seed`` modulo the file length).
    n, memory : int
        Requests per run and ``M`` (tokens).
    loads : sequence of float
        Nominal loads ``rho``: arrival rate ``rho * M / mean(A_i)`` requests per round, with
        ``A_i = o_i s_i + o_i (o_i+1)/2`` computed on the run's own requests
        (:func:`~lpsched.generators.arrivals.nominal_capacity`).
    trace_dir : path-like, optional
        Folder holding ``splitwise_conv.csv`` (Azure conversation trace with ``arrived_at``);
        adds the source ``trace``: the window's own arrival times, time-scaled to the rate (the
        implied round duration is reported in ms). Default: the trace cache (``lpsched traces
        fetch conversation``) when it holds the file; else that table is skipped, which the
        report and standard error say.
    solver : str
        Phase-1 solver of receding-horizon Sorted-F (``auto``: the rule of
        :func:`~lpsched.policies.sorted_f.resolve_phase1`, swap at n = 2000).
    workload : str
        Workload of the source ``poisson`` (default ``paper-mix``, the paper's mix).
    time_model : TimeModel or str, optional
        Run the study in seconds under this model (module docstring): ``loads`` are loads in
        seconds, arrivals ``arrival_s`` (Poisson: ``rho`` times
        :func:`~lpsched.generators.arrivals.seconds_capacity` requests per second; trace: the
        window's own ``arrived_at``, time-scaled to that rate), the policies admit on the
        model's clock, and the table gives latencies in seconds and what the rounds cost
        (mean busy round, prefill tokens and decoding requests per busy round). Rows go to
        ``online-load-seconds.csv`` with the model in their parameters. Default: rounds.
    **engine
        Options of :func:`~lpsched.sweeps.engine.run_sweep`.

    Returns
    -------
    str
        Markdown, one table per source: per load, mean and p99 latency of each policy (mean
        over seeds, rounds; seconds with ``time_model``), the ratios MC-SF / RH-Sorted-F and
        FCFS / RH-Sorted-F of mean latency (mean over seeds) and where RH-Sorted-F is best.

    Raises
    ------
    KeyError, TimeModelError
        An unknown or malformed ``time_model``.

    Notes
    -----
    Every schedule is checked. Under overload latency grows with ``n`` (the queue builds up),
    so the numbers compare policies at equal ``n``. Source: ours (SPEC sections 5 and 10).
    """
    model = None if time_model is None else parse_time_model(time_model)
    out = Path(out_dir)
    note = None
    if trace_dir is None:
        trace_dir = cached_trace_dir(["conversation"])
        if trace_dir is None:
            note = skipped("the 'trace' table (Azure conversation arrivals)", ["conversation"])
    tdir = None if trace_dir is None else require_files(trace_dir, [TRACE_FILE])
    sources = ["poisson"] + (["trace"] if tdir is not None else [])
    rows = tuple({"policy": p} for p in ONLINE_POLICIES)
    tasks = [
        Task({"source": src, "load": f"{float(load):g}", "seed": seed}, rows)
        for src in sources
        for load in loads
        for seed in seeds
    ]
    setting = _Setting(n, memory, solver, tdir, workload)
    params: dict[str, Any] = {
        "n": n,
        "memory": memory,
        "solver": solver,
        "workload": workload,
        "traces": trace_identity(tdir, [TRACE_FILE]),
    }
    if model is None:
        name, fields, check = NAME, ONLINE_FIELDS, _check_row
        compute = partial(_load_rows, setting=setting)
        types: dict[str, Callable[[str], Any]] = {
            "mean_latency": finite_float,
            "p50_latency": finite_float,
            "p99_latency": finite_float,
            "makespan": int,
            "throughput": finite_float,
        }
    else:
        name, fields, check = SECONDS_NAME, SECONDS_FIELDS, _check_seconds_row
        compute = partial(_seconds_rows, setting=setting, model=model.spec)
        params["time_model"] = model.to_dict()
        types = {
            "mean_latency_s": finite_float,
            "p50_latency_s": finite_float,
            "p99_latency_s": finite_float,
            "throughput_s": finite_float,
            "makespan_s": finite_float,
            "busy_round_ms": finite_float,
        }
    sweep = Sweep(
        name,
        fields,
        ["source", "load", "seed", "policy"],
        tasks,
        compute,
        params=params,
        types={"n": int, **types, "runtime_s": seconds},
        check=check,
        rules=RowRules(
            order=() if model is None else _SECONDS_ORDER, not_applicable=["round_ms", "time_scale"]
        ),
    )
    done = run_sweep(sweep, out, **engine)
    # matplotlib loads only when a figure is drawn: the command line starts fast
    from ...plotting.style import save_figure

    parts = []
    for src in sources:
        sel = [r for r in done if r["source"] == src]
        if not sel:
            continue
        if model is None:
            table, figure = _online_table(sel, src, n), _online_figure(sel, src)
        else:
            table, figure = _seconds_table(sel, src, n, model), _seconds_figure(sel, src, model)
        parts.append(table)
        save_figure(figure, report_path(out, name, f"-{src}.png"), dpi=120)
    if note is not None:
        parts.append(f"Note: {note}.")
    return write_report(out, NAME, "\n\n".join(parts))


def _load_rows(
    params: Mapping[str, Any], missing: list[dict[str, Any]], *, setting: _Setting
) -> Iterator[dict[str, Any]]:
    """One (source, load, seed): every missing online policy on one arrival sequence."""
    inst, rate, round_ms = _online_instance(setting, *_task(params))
    for key in missing:
        sched = run_policy(inst, key["policy"], solver=setting.solver).check()
        st = latency_stats(sched)
        yield {
            **key,
            "n": setting.n,
            "memory": setting.memory,
            "rate": rate,
            "round_ms": round_ms,
            **{k: st[k] for k in _ROUND_STATS},
            "replans": sched.info.get("replans", "-"),
            "runtime_s": sched.info["runtime_s"],
        }


def _check_row(v: Mapping[str, Any]) -> str | None:
    """A row read back must be possible: latencies at least one round, ordered
    ``p50 <= p99``, a positive throughput and makespan."""
    if not (1 <= v["p50_latency"] <= v["p99_latency"] and v["mean_latency"] >= 1):
        return "latencies below one round or p50 above p99"
    if v["throughput"] <= 0 or v["makespan"] < 1:
        return "a non-positive throughput or makespan"
    return None


def _versus_rh_sorted_f(
    by: Mapping[tuple[Any, int, str], Mapping[str, Any]], load: Any, seeds: Sequence[int], stat: str
) -> tuple[dict[str, float], int]:
    """At one load: MC-SF's and FCFS's ``stat`` over receding-horizon Sorted-F's (mean over
    the seeds with both rows; nan without), and on how many seeds RH-Sorted-F beats both."""
    rh = "online-sorted-f"
    ratios = {}
    for p in ("online-mcsf", "online-fcfs"):
        v = [
            float(by[(load, s, p)][stat]) / float(by[(load, s, rh)][stat])
            for s in seeds
            if (load, s, p) in by and (load, s, rh) in by
        ]
        ratios[p] = float(np.mean(v)) if v else float("nan")
    wins = sum(
        1
        for s in seeds
        if (load, s, rh) in by
        and all(
            float(by[(load, s, rh)][stat]) < float(by[(load, s, p)][stat])
            for p in ("online-mcsf", "online-fcfs")
            if (load, s, p) in by
        )
    )
    return ratios, wins


def _by_load(rows) -> tuple[list[float], dict[tuple[float, Any, str], Any], list[Any]]:
    """The loads, the rows by ``(load, seed, policy)``, and the seeds."""
    loads = sorted({float(r["load"]) for r in rows})
    by = {(float(r["load"]), r["seed"], r["policy"]): r for r in rows}
    return loads, by, sorted({r["seed"] for r in rows})


def _versus_cells(row: dict[str, Any], by, load: float, seeds: Sequence[Any], stat: str) -> None:
    """Add to ``row`` MC-SF's and FCFS's ``stat`` over RH-Sorted-F's and the seeds it wins."""
    ratios, wins = _versus_rh_sorted_f(by, load, seeds, stat)
    for p, ratio in ratios.items():
        row[f"{_SHORT[p]}/RH-SF"] = f"{ratio:.3f}"
    row["RH-SF < both (seeds)"] = f"{wins}/{len(seeds)}"


def _online_table(rows, src: str, n: int) -> str:
    loads, by, seeds = _by_load(rows)
    out = []
    for load in loads:
        row: dict[str, Any] = {"load rho": f"{load:g}"}
        if src == "trace":
            ms = [float(by[k]["round_ms"]) for k in by if k[0] == load]
            row["round ms"] = f"{np.mean(ms):.0f}"
        for stat, lab in (("mean_latency", "mean"), ("p99_latency", "p99")):
            for p in ONLINE_POLICIES:
                v = [float(by[(load, s, p)][stat]) for s in seeds if (load, s, p) in by]
                row[f"{lab} {_SHORT[p]}"] = f"{np.mean(v):.0f}" if v else "-"
        _versus_cells(row, by, load, seeds, "mean_latency")
        out.append(row)
    title = {
        "poisson": "Poisson arrivals, the paper's mix (or the workload given)",
        "trace": "Azure conversation trace, own arrivals (time-scaled)",
    }[src]
    head = (
        f"**{title}** (n = {n}, mean over seeds {', '.join(seeds)}; latencies in rounds; "
        "RH-SF = receding-horizon Sorted-F)"
    )
    return head + "\n\n" + markdown_table(out, list(out[0]))


def _latency_panels(rows, stats: Sequence[str], ylabel: Callable[[str], str]) -> list:
    """One panel per column of ``stats``: each policy's mean over the seeds against the load,
    labelled ``ylabel(stat)``."""
    panels = []
    for stat in stats:
        series = {}
        for p in ONLINE_POLICIES:
            m = mean_by([r for r in rows if r["policy"] == p], ("load",), stat)
            xs = sorted(m, key=lambda k: float(k[0]))
            series[p] = ([float(x[0]) for x in xs], [m[x] for x in xs])
        panels.append((series, ylabel(stat)))
    return panels


def _online_figure(rows, src: str):
    from ...plotting.curves import plot_panels

    panels = _latency_panels(
        rows, ("mean_latency", "p99_latency"), lambda stat: stat.replace("_", " ") + " (rounds)"
    )
    return plot_panels(
        panels, xlabel="nominal load rho", title=f"Online load sweep ({src})", logy=True
    )


# ---------------------------------------------------------------------- in seconds
def _seconds_instance(
    setting: _Setting, source: str, load: float, seed: int, model: TimeModel
) -> tuple[Instance, float, float, float]:
    """The instance at load ``load`` in seconds: (instance with ``arrival_s``, rate in
    requests per second, saturated mean round ``d_bar`` in seconds, time scale of the trace's
    seconds or nan)."""
    n, memory, solver = setting.n, setting.memory, setting.solver
    if source == "poisson":
        base = setting.poisson(seed)
        cap_s, d_bar = seconds_capacity(base, model, solver=solver)
        rate = load * cap_s
        inst = generate(setting.workload, n, memory, seed=seed, arrival_rate_s=rate)
        return inst, rate, d_bar, float("nan")
    _, s, o, t, offset = setting.trace(seed)
    assert t is not None  # the conversation trace has arrived_at
    sl = slice(offset, offset + n)
    base = Instance.from_arrays(s[sl], o[sl], memory, name=f"{TRACE_FILE}-o{offset}-n{n}")
    cap_s, d_bar = seconds_capacity(base, model, solver=solver)
    rate = load * cap_s
    tw = t[sl] - float(t[sl].min())
    span = float(tw.max())
    scale = (n - 1) / (rate * span)  # the window's own pattern at `rate` requests per second
    return base.replace(arrival_s=tw * scale), rate, d_bar, scale


def _seconds_rows(
    params: Mapping[str, Any], missing: list[dict[str, Any]], *, setting: _Setting, model: str
) -> Iterator[dict[str, Any]]:
    """One (source, load, seed) in seconds: every missing online policy on one arrival
    sequence, on the clock of ``model`` (its command-line form: plug-ins parse in workers)."""
    tm = parse_time_model(model)
    inst, rate, d_bar, scale = _seconds_instance(setting, *_task(params), tm)
    for key in missing:
        sched = run_policy(inst, key["policy"], solver=setting.solver, time_model=tm).check()
        secs = to_seconds(sched, tm)
        st = secs.stats()
        P, D, K = round_loads(sched)
        busy = D > 0
        d = tm.durations(P[busy], D[busy], K[busy])
        yield {
            **key,
            "n": setting.n,
            "memory": setting.memory,
            "rate_s": rate,
            "round_ms": 1000.0 * d_bar,
            "time_scale": scale,
            **{k: st[k] for k in ("mean_latency_s", "p50_latency_s", "p90_latency_s")},
            "p99_latency_s": st["p99_latency_s"],
            "mean_ttft_s": st["mean_ttft_s"],
            "throughput_s": st["throughput_requests_s"],
            "makespan_s": st["makespan_s"],
            "busy_round_ms": 1000.0 * float(d.mean()),
            "prefill_per_round": float(P[busy].mean()),
            "decoding_per_round": float(D[busy].mean()),
            "mean_latency": latency_stats(sched)["mean_latency"],
            "replans": sched.info.get("replans", "-"),
            "runtime_s": sched.info["runtime_s"],
        }


#: The order of a seconds row's figures: a request's first token comes before its last, and
#: every latency ends by the makespan (arrivals from 0 s).
_SECONDS_ORDER = (
    ("mean_ttft_s", "mean_latency_s", "makespan_s"),
    ("p50_latency_s", "p90_latency_s", "p99_latency_s", "makespan_s"),
)


def _check_seconds_row(v: Mapping[str, Any]) -> str | None:
    """A row read back must be possible: positive latencies ordered ``p50 <= p99``, a
    positive throughput, makespan and busy round."""
    if not (0 < v["p50_latency_s"] <= v["p99_latency_s"] and v["mean_latency_s"] > 0):
        return "latencies not positive or p50 above p99"
    if v["throughput_s"] <= 0 or v["makespan_s"] <= 0 or v["busy_round_ms"] <= 0:
        return "a non-positive throughput, makespan or round duration"
    return None


def _seconds_table(rows, src: str, n: int, model: TimeModel) -> str:
    loads, by, seeds = _by_load(rows)

    def mean(load: float, p: str, stat: str) -> float:
        v = [float(by[(load, s, p)][stat]) for s in seeds if (load, s, p) in by]
        return float(np.mean(v)) if v else float("nan")

    main, cost = [], []
    for load in loads:
        row: dict[str, Any] = {"load rho": f"{load:g}"}
        row["req/s"] = f"{mean(load, 'online-fcfs', 'rate_s'):.3f}"
        for stat, lab in (("mean_latency_s", "mean"), ("p99_latency_s", "p99")):
            for p in ONLINE_POLICIES:
                row[f"{lab} {_SHORT[p]} (s)"] = f"{mean(load, p, stat):.1f}"
        _versus_cells(row, by, load, seeds, "mean_latency_s")
        main.append(row)
        for p in ONLINE_POLICIES:
            cost.append(
                {
                    "load rho": f"{load:g}",
                    "policy": _SHORT[p],
                    "busy round (ms)": f"{mean(load, p, 'busy_round_ms'):.1f}",
                    "prefill tokens / round": f"{mean(load, p, 'prefill_per_round'):.0f}",
                    "decoding / round": f"{mean(load, p, 'decoding_per_round'):.1f}",
                    "mean TTFT (s)": f"{mean(load, p, 'mean_ttft_s'):.1f}",
                    "req/s served": f"{mean(load, p, 'throughput_s'):.3f}",
                    "mean latency (rounds)": f"{mean(load, p, 'mean_latency'):.0f}",
                }
            )
    d_bar = np.mean([float(r["round_ms"]) for r in rows])
    title = {
        "poisson": "Poisson arrivals in seconds, the paper's mix (or the workload given)",
        "trace": "Azure conversation trace, own arrivals in seconds (time-scaled)",
    }[src]
    head = (
        f"**{title}**, time model {model.name} (n = {n}, mean over seeds {', '.join(seeds)}; "
        f"latencies in seconds from arrival; load rho = arrival rate x saturated round "
        f"{d_bar:.1f} ms (offline Sorted-F, mean over seeds) / nominal capacity per round; "
        "RH-SF = receding-horizon Sorted-F)"
    )
    return (
        head
        + "\n\n"
        + markdown_table(main, list(main[0]))
        + "\n\nWhat the rounds cost (busy rounds only; mean over seeds):\n\n"
        + markdown_table(cost, list(cost[0]))
    )


def _seconds_figure(rows, src: str, model: TimeModel):
    from ...plotting.curves import plot_panels

    panels = _latency_panels(
        rows,
        ("mean_latency_s", "p99_latency_s"),
        lambda stat: stat.replace("_s", "").replace("_", " ") + " (s)",
    )
    return plot_panels(
        panels,
        xlabel="load rho (in seconds)",
        title=f"Online load sweep in seconds ({src}, {model.name})",
        logy=True,
    )

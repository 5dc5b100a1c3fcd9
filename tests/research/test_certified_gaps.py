"""The certified-gap reproduction on a tiny scale: rows, resume, the table by hand, the empty
Sorted-LP cell, the n = 2000 instances; with a stand-in certify (fast, deterministic) and with
the real one."""

from __future__ import annotations

import csv
import math
import time
from pathlib import Path

import numpy as np
import pytest

from lpsched.bounds import combinatorial_bound
from lpsched.io import read_instance
from lpsched.policies.local_search import best_heuristic
from lpsched.policies.registry import run_policy
from lpsched.research.reproductions import certified_gaps as cg
from lpsched.research.reproductions.choices import StudyChoiceError
from lpsched.schedule import Schedule
from lpsched.solvers.result import Result

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "sizes": [5, 7],
    "seeds": [0],
    "workloads": ["scaled-mix", "uniform-small"],
    "time_limits": {5: 1, 7: 2},
    "progress": False,
}


def _stand_in(calls: list, stop_after: int | None = None, policy: str | None = None):
    """A certify that answers at once: the best list policy (or ``policy``'s schedule) and
    the combinatorial bound. With ``stop_after``, Ctrl-C (KeyboardInterrupt) on the call
    after that many."""

    def certify(instance, time_limit=60.0, *, threads=None, seed=0, progress=None):
        if stop_after is not None and len(calls) >= stop_after:
            raise KeyboardInterrupt
        calls.append((instance.name, time_limit, threads))
        t0 = time.perf_counter()
        best = best_heuristic(instance) if policy is None else run_policy(instance, policy)
        bound = float(combinatorial_bound(instance))
        optimal = math.ceil(bound - 1e-6) >= best.tel
        return Result(
            schedule=Schedule(instance, best.start, policy=best.policy),
            objective=best.tel,
            bound=float(best.tel) if optimal else bound,
            bound_method="combinatorial",
            gap=0.0 if optimal else (best.tel - bound) / best.tel,
            status="optimal" if optimal else "gap",
            runtime_s=time.perf_counter() - t0,
            info={"methods": {"list policies": "done", "lp": "skipped: a stand-in"}},
        )

    return certify


def _rows(folder: Path) -> list[dict[str, str]]:
    with (folder / "certified-gaps.csv").open() as fh:
        return list(csv.DictReader(fh))


def _table_rows(table: str) -> dict[tuple[str, str], dict[str, str]]:
    """The Markdown table as {(workload, n): {header: cell}}."""
    lines = [ln for ln in table.splitlines() if ln.startswith("|")]
    headers = [h.strip() for h in lines[0].strip("|").split("|")]
    out = {}
    for ln in lines[2:]:
        cells = dict(zip(headers, (c.strip() for c in ln.strip("|").split("|")), strict=True))
        out[(cells["workload"], cells["n"])] = cells
    return out


def test_rows_are_the_policies_and_the_certify_answer(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(calls))
    cg.run(tmp_path, **TINY)
    rows = _rows(tmp_path)
    assert len(rows) == 2 * 2 * len(cg.CERTIFIED_POLICIES)  # 2 workloads x 2 sizes
    expected = [
        (cg.certified_instance(w, n, 0).name, {5: 1.0, 7: 2.0}[n])
        for w in ("scaled-mix", "uniform-small")
        for n in (5, 7)
    ]
    assert sorted(c[:2] for c in calls) == sorted(expected)  # each instance once
    for r in rows:
        inst = cg.certified_instance(r["workload"], int(r["n"]), int(r["seed"]))
        heur = best_heuristic(inst)
        tels = {p: run_policy(inst, p, solver="dp").tel for p in cg.CERTIFIED_POLICIES}
        assert (
            int(r["memory"])
            == inst.memory
            == {"scaled-mix": 50, "uniform-small": 30}[r["workload"]]
        )
        assert int(r["tel"]) == tels[r["policy"]] and r["note"] == ""
        assert int(r["certify_tel"]) == heur.tel and r["certify_method"] == heur.policy
        best = min(heur.tel, *tels.values())
        assert int(r["best_tel"]) == best
        assert r["best_method"] == (
            heur.policy if best == heur.tel else min(tels, key=tels.__getitem__)
        )
        comb = combinatorial_bound(inst)
        optimal = comb >= best
        assert float(r["bound"]) == (float(heur.tel) if comb >= heur.tel else float(comb))
        assert r["status"] == ("optimal" if optimal else "gap")
        assert float(r["gap"]) == pytest.approx(0.0 if optimal else (best - comb) / best, abs=1e-6)
        assert float(r["time_limit"]) == {5: 1.0, 7: 2.0}[int(r["n"])]
        assert r["certify_methods"] == "list policies: done; lp: skipped: a stand-in"


def test_a_policy_better_than_certify_gives_the_best_schedule(tmp_path, monkeypatch):
    """A certify whose schedule is FCFS's: the best TEL is the best policy's, and the status
    and the gap are those of that TEL."""
    monkeypatch.setattr(cg, "certify", _stand_in([], policy="fcfs"))
    cg.run(
        tmp_path,
        sizes=[8],
        seeds=[2],
        workloads=["scaled-mix", "uniform-small"],
        time_limits=1,
        progress=False,
    )
    for r in _rows(tmp_path):
        inst = cg.certified_instance(r["workload"], 8, 2)
        tels = {p: run_policy(inst, p, solver="dp").tel for p in cg.CERTIFIED_POLICIES}
        best = min(tels.values())
        assert best < tels["fcfs"] == int(r["certify_tel"]) and r["certify_method"] == "fcfs"
        assert int(r["best_tel"]) == best and tels[r["best_method"]] == best
        assert r["best_method"] == min(tels, key=tels.__getitem__)  # the first on ties
        comb = combinatorial_bound(inst)
        assert float(r["bound"]) == comb < best
        assert r["status"] == "gap"
        assert float(r["gap"]) == pytest.approx((best - comb) / best, abs=1e-6)


def test_the_table_is_the_rows_summarised(tmp_path, monkeypatch):
    monkeypatch.setattr(cg, "certify", _stand_in([]))
    table = cg.run(tmp_path, **TINY)
    assert (tmp_path / "certified-gaps.md").read_text() == table + "\n"
    cells = _table_rows(table)
    rows = _rows(tmp_path)
    assert set(cells) == {(w, n) for w in ("scaled-mix", "uniform-small") for n in ("5", "7")}
    for (w, n), cell in cells.items():
        rs = [r for r in rows if (r["workload"], r["n"]) == (w, n)]
        bound = float(rs[0]["bound"])  # one seed: one instance
        best = int(rs[0]["best_tel"])
        for policy in cg.CERTIFIED_POLICIES:
            (r,) = [r for r in rs if r["policy"] == policy]
            ratio = int(r["tel"]) / bound
            assert cell[policy] == f"{ratio:.3f} / {ratio:.3f}"
        assert cell["best / bound"] == f"{best / bound:.3f} / {best / bound:.3f}"
        assert cell["proven optimal"] == f"{int(math.ceil(bound - 1e-6) >= best)}/1"
        assert cell["instances"] == "1" and cell["M"] == rs[0]["memory"]
        assert cell["time limit s"] == {"5": "1", "7": "2"}[n]
        assert cell["bound by"] == "combinatorial 1"
        assert cell["best by"] == f"{rs[0]['best_method']} 1"
        secs = float(rs[0]["certify_s"])
        assert cell["certify s mean / max"] == f"{secs:.1f} / {secs:.1f}"


def test_mean_and_max_over_seeds_by_hand():
    """Three instances of one group: the table's means and maxima, computed by hand; an
    instance's bound is the best of its rows."""
    base = {
        "workload": "scaled-mix",
        "n": "6",
        "memory": "50",
        "time_limit": "5",
        "note": "",
        "policy_s": "0.01",
        "certify_method": "lns",
        "bound_method": "mip",
    }

    def rows(seed, bound, best, tels, secs):
        return [
            {
                **base,
                "seed": seed,
                "policy": p,
                "tel": str(t),
                "certify_tel": str(best),
                "best_tel": str(best),
                "best_method": "lns",
                "bound": str(bound),
                "status": "optimal" if math.ceil(bound - 1e-6) >= best else "gap",
                "gap": "0",
                "certify_s": str(secs),
            }
            for p, t in zip(cg.CERTIFIED_POLICIES, tels, strict=True)
        ]

    third = rows("2", 100.0, 100, [300, 100, 150, 110, 100], 0.5)
    third[1] = dict(third[1], bound="90.0", bound_method="combinatorial")  # a weaker row
    table = cg.certified_gap_table(
        rows("0", 40.0, 40, [60, 50, 44, 42, 40], 1.25)
        + rows("1", 50.5, 55, [101, 55, 66, 60, 56], 3.0)
        + third
    )
    cell = _table_rows(table)[("scaled-mix", "6")]
    # fcfs: 60 / 40 = 1.5, 101 / 50.5 = 2.0, 300 / 100 = 3 (the instance's best bound, 100)
    assert cell["fcfs"] == "2.167 / 3.000"
    assert cell["mcsf"] == f"{(50 / 40 + 55 / 50.5 + 1) / 3:.3f} / 1.250"
    assert cell["sorted-lp"] == f"{(1 + 56 / 50.5 + 1) / 3:.3f} / {56 / 50.5:.3f}"
    assert cell["best / bound"] == f"{(1 + 55 / 50.5 + 1) / 3:.3f} / {55 / 50.5:.3f}"
    assert cell["proven optimal"] == "2/3" and cell["instances"] == "3"
    assert cell["bound by"] == "mip 3" and cell["best by"] == "lns 3"
    assert cell["certify s mean / max"] == "1.6 / 3.0"  # (1.25 + 3 + 0.5) / 3 = 1.583


def test_an_interrupted_run_resumes_without_duplicates(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(calls, stop_after=1))
    with pytest.raises(KeyboardInterrupt):
        cg.run(tmp_path, **TINY)
    first = _rows(tmp_path)
    assert len(first) == len(cg.CERTIFIED_POLICIES)  # the first instance, whole
    assert len({(r["workload"], r["n"], r["seed"]) for r in first}) == 1
    again: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(again))
    messages: list[str] = []
    cg.run(tmp_path, report=messages.append, **TINY)
    rows = _rows(tmp_path)
    assert len(again) == 3  # only the three unfinished instances
    assert len(rows) == 4 * len(cg.CERTIFIED_POLICIES)
    assert len({tuple(r[k] for k in cg.KEY) for r in rows}) == len(rows)
    assert rows[: len(first)] == first
    assert any("reused 5 of 20" in m for m in messages)
    # a third run computes nothing
    third: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(third))
    cg.run(tmp_path, **TINY)
    assert third == [] and _rows(tmp_path) == rows


def test_another_time_limit_is_another_row(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(calls))
    small = {"sizes": [5], "seeds": [0], "workloads": ["scaled-mix"], "progress": False}
    cg.run(tmp_path, time_limits=1, **small)
    table = cg.run(tmp_path, time_limits={5: 4}, **small)
    assert [c[1] for c in calls] == [1.0, 4.0]
    assert len(_rows(tmp_path)) == 2 * len(cg.CERTIFIED_POLICIES)
    assert _table_rows(table)[("scaled-mix", "5")]["time limit s"] == "4"


def test_sorted_lp_above_its_size_limit_leaves_a_documented_empty_cell(tmp_path, monkeypatch):
    monkeypatch.setattr(cg, "certify", _stand_in([]))
    table = cg.run(tmp_path, lp_max_nonzeros=1, policy_options={"lp": "full"}, **TINY)
    rows = _rows(tmp_path)
    lp_rows = [r for r in rows if r["policy"] == "sorted-lp"]
    assert len(lp_rows) == 4
    for r in lp_rows:
        assert r["tel"] == "" and r["policy_s"] == ""
        assert r["note"].startswith("LP too large: policy 'sorted-lp' cannot run on this instance")
        assert "above the limit of 1 " in r["note"]
    assert all(r["tel"] != "" and r["note"] == "" for r in rows if r["policy"] != "sorted-lp")
    cells = _table_rows(table)  # (lp="full": "auto" would order by the aggregated LP)
    assert all(c["sorted-lp"] == "- (LP too large: 1/1)" for c in cells.values())
    assert all(c["sorted-f"][0].isdigit() for c in cells.values())
    for r in lp_rows:  # each failure is named below the table with its message
        assert f"- sorted-lp on {r['workload']} n = {r['n']} seed 0: {r['note']}" in table


def test_a_row_read_back_must_be_possible(tmp_path, monkeypatch):
    monkeypatch.setattr(cg, "certify", _stand_in([]))
    small = {"sizes": [5], "seeds": [0], "workloads": ["scaled-mix"], "progress": False}
    cg.run(tmp_path, time_limits=1, **small)
    path = tmp_path / "certified-gaps.csv"
    rows = _rows(tmp_path)
    header = list(rows[0])
    bad = dict(rows[0], tel="")  # an empty TEL without a note
    low = dict(rows[1], bound=str(int(rows[1]["best_tel"]) + 1))  # a bound above the TEL
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, header, lineterminator="\n")
        w.writeheader()
        w.writerows([bad, low, *rows[2:]])
    messages: list[str] = []
    calls: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(calls))
    cg.run(tmp_path, time_limits=1, report=messages.append, **small)
    assert len(calls) == 1  # the instance is recomputed
    assert any("line 2: an empty TEL needs a note" in m for m in messages)
    assert any("line 3: " in m and "below its own bound" in m for m in messages)


def test_paper_scale_instances(tmp_path, monkeypatch):
    """n = 2000: the default instance and paper-mix seeds 1 and 2; Sorted-LP's LP does not fit."""
    shipped = read_instance(ROOT / "instances" / "default.json")
    default = cg.certified_instance("default", 2000, 0)
    assert default.name == shipped.name == "default" and default.memory == 16492
    for field in ("prefill", "decode", "arrival"):
        np.testing.assert_array_equal(getattr(default, field), getattr(shipped, field))
    calls: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(calls))
    table = cg.run(
        tmp_path,
        sizes=[5, 2000],
        seeds=[0],
        workloads=["scaled-mix"],
        time_limits={5: 1},
        progress=False,
    )
    # longest time limit first (600 s at n = 2000), each instance once
    assert [c[:2] for c in calls] == [
        ("default", 600.0),
        ("paper-mix-n2000-M16492-s1", 600.0),
        ("paper-mix-n2000-M16492-s2", 600.0),
        ("mix5-s0", 1.0),
    ]
    rows = _rows(tmp_path)
    paper = [r for r in rows if r["n"] == "2000"]
    assert {(r["workload"], r["seed"]) for r in paper} == {
        ("default", "0"),
        ("paper-mix", "1"),
        ("paper-mix", "2"),
    }
    lp = [r for r in paper if r["policy"] == "sorted-lp"]
    # the full LP is above its limit at n = 2000: sorted-lp orders by the aggregated LP
    assert len(lp) == 3 and all(r["tel"] != "" and r["note"] == "" for r in lp)
    sf = next(r for r in paper if (r["workload"], r["policy"]) == ("default", "sorted-f"))
    assert int(sf["tel"]) == 6362535  # instances/README.md: Sorted-F with Phase 1 swap
    assert float(sf["bound"]) == 5258523.0  # the combinatorial bound, written in full
    cells = _table_rows(table)
    # Sorted-LP over the aggregated LP (30 master solves): TEL 5,953,416 on the default
    assert (
        cells[("default", "2000")]["sorted-lp"]
        == f"{5953416 / 5258523:.3f} / {5953416 / 5258523:.3f}"
    )
    assert cells[("paper-mix", "2000")]["M"] == "16492"


def test_bad_options_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no time limit for n = 7"):
        cg.run(tmp_path, sizes=[7], progress=False)
    with pytest.raises(ValueError, match="the time limit for n = 30"):
        cg.run(tmp_path, sizes=[30], time_limits={30: 0}, progress=False)
    with pytest.raises(ValueError, match="seed 0 of paper-mix at n = 2000 is the default"):
        cg.run(tmp_path, sizes=[2000], paper_seeds=[0, 1], progress=False)
    with pytest.raises(StudyChoiceError) as err:  # a KeyError whose text is the message
        cg.run(tmp_path, workloads=["paper-mix"], progress=False)
    assert str(err.value).startswith("unknown small workload 'paper-mix'; known: paper-scaled")
    with pytest.raises(ValueError, match="the default instance has n = 2000"):
        cg.certified_instance("default", 30, 0)
    assert not (tmp_path / "certified-gaps.csv").exists()  # refused before any work


def test_with_the_real_certify(tmp_path):
    """The real certify, tiny time limits, two workers: every row is possible, and the bound
    never exceeds the proven optimum (HiGHS on the MIP at n = 5) nor the TELs."""
    from lpsched.certify import solve_exact

    table = cg.run(tmp_path, sizes=[5], seeds=[0], time_limits=3, workers=2, progress=False)
    rows = _rows(tmp_path)
    assert len(rows) == len(cg.CERTIFIED_POLICIES)  # the default small workload, paper-scaled
    for r in rows:
        inst = cg.certified_instance(r["workload"], 5, 0)
        opt = solve_exact(inst, "highs", time_limit=30, threads=1)
        assert opt.status == "optimal"
        assert float(r["bound"]) <= opt.objective + 1e-6 <= int(r["best_tel"]) + 1e-6
        assert int(r["tel"]) >= int(r["best_tel"])
        assert float(r["certify_s"]) < 3 + 30  # a hang guard: the time limit, plus room
    assert "paper-scaled" in table


def test_the_command_line_passes_sizes_seeds_and_time_limits(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from lpsched.cli import main

    calls: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(calls))
    out = tmp_path / "out"
    args = ["reproduce", "certified-gaps", "--out", str(out), "--sizes", "5,6", "--seeds", "1"]
    res = CliRunner().invoke(main, [*args, "--time-limits", "5=1.5,6=2", "--workers", "1"])
    assert res.exit_code == 0, res.output
    assert sorted(c[:2] for c in calls) == [("paper5-s1", 1.5), ("paper6-s1", 2.0)]
    assert "| paper-scaled |   5 |" in res.output
    res = CliRunner().invoke(main, [*args, "--time-limits", "3", "--workers", "1"])
    assert res.exit_code == 0 and [c[1] for c in calls[2:]] == [3.0] * 2
    res = CliRunner().invoke(main, [*args, "--time-limits", "5=fast"])
    assert res.exit_code == 2 and "expected seconds (e.g. 60)" in res.output
    for bad, why in [("0", "finite number of seconds > 0"), ("5=1,6=nan", "> 0"),
                     ("5=1,5=2", "a size is given twice")]:  # fmt: skip
        res = CliRunner().invoke(main, [*args, "--time-limits", bad])
        assert res.exit_code == 2 and why in res.output
    res = CliRunner().invoke(main, [*args[:-4], "--sizes", "7", "--workers", "1"])
    assert res.exit_code == 1 and "no time limit for n = 7" in res.output
    res = CliRunner().invoke(main, ["reproduce", "optimality-gaps", "--time-limits", "3"])
    assert res.exit_code == 2 and "'optimality-gaps' has no time limits" in res.output


def _rewrite(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def test_the_rows_of_one_instance_must_agree(tmp_path, monkeypatch):
    """Issue 22, item 4: a hand-edited row whose bound is possible on its own (at most its
    best TEL) but not the bound of the instance's other rows used to be joined to them: the
    table took the largest bound and the smallest best TEL of different rows and printed
    'best / bound 0.973'. Now the instance's rows are rejected together and recomputed."""
    monkeypatch.setattr(cg, "certify", _stand_in([]))
    small = {"sizes": [7], "seeds": [0], "workloads": ["scaled-mix"], "progress": False}
    cg.run(tmp_path, time_limits=1, **small)
    rows = _rows(tmp_path)
    assert rows[0]["status"] == "gap"  # else there is no room to edit the bound in
    edited = [dict(r) for r in rows]
    # row 1: a larger bound, its own best TEL lowered to it: possible alone
    tel = int(edited[0]["best_tel"])
    bound = float(edited[0]["bound"]) + 0.5 * (tel - float(edited[0]["bound"]))
    best = math.ceil(bound) + 1
    edited[0].update(bound=repr(bound), best_tel=str(best), certify_tel=str(best))
    edited[0].update(gap=str((best - bound) / best))
    edited[0]["tel"] = str(max(best, int(edited[0]["tel"])))
    assert cg._check_row(cg_values(edited[0])) is None
    _rewrite(tmp_path / "certified-gaps.csv", edited)
    messages: list[str] = []
    calls: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(calls))
    table = cg.run(tmp_path, time_limits=1, report=messages.append, **small)
    assert len(calls) == 1
    assert any("differ in" in m and "recomputed whole" in m for m in messages), messages
    timing = ("policy_s", "certify_s")

    def untimed(rs):
        return [{k: v for k, v in r.items() if k not in timing} for r in rs]

    assert untimed(_rows(tmp_path)) == untimed(rows)
    best_over_bound = _table_rows(table)[("scaled-mix", "7")]["best / bound"]
    assert float(best_over_bound.split(" / ")[0]) >= 1.0


def cg_values(row: dict[str, str]) -> dict:
    """A CSV row parsed as the sweep parses it (for calling the checks directly)."""
    out: dict = dict(row)
    for col in ("n", "seed", "memory", "certify_tel", "best_tel"):
        out[col] = int(row[col])
    for col in ("bound", "gap", "time_limit", "certify_s"):
        out[col] = float(row[col])
    out["tel"] = int(row["tel"]) if row["tel"] else None
    return out


@pytest.mark.parametrize(
    "column, value, reason",
    [
        ("bound_method", "oracle", "is not a lower-bound method of certify"),
        ("bound_method", "lns", "is not a lower-bound method of certify"),
        ("certify_method", "magic", "is neither a certify method nor a policy"),
    ],
)
def test_made_up_method_names_are_rejected(tmp_path, monkeypatch, column, value, reason):
    """Issue 22, item 4: method names were printed as given."""
    monkeypatch.setattr(cg, "certify", _stand_in([]))
    small = {"sizes": [5], "seeds": [0], "workloads": ["scaled-mix"], "progress": False}
    cg.run(tmp_path, time_limits=1, **small)
    rows = _rows(tmp_path)
    _rewrite(tmp_path / "certified-gaps.csv", [{**r, column: value} for r in rows])
    messages: list[str] = []
    calls: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(calls))
    table = cg.run(tmp_path, time_limits=1, report=messages.append, **small)
    assert len(calls) == 1
    assert any(f"line 2: {column} {value!r} {reason}" in m for m in messages), messages
    assert value not in table


def test_a_part_of_an_instances_rows_is_recomputed_whole(tmp_path, monkeypatch):
    """Issue 22, item 4: the rows of one instance come from one certify run; with one row
    deleted, a resume used to run certify again for it alone and join the two runs."""
    monkeypatch.setattr(cg, "certify", _stand_in([]))
    small = {"sizes": [5], "seeds": [0], "workloads": ["scaled-mix"], "progress": False}
    cg.run(tmp_path, time_limits=1, **small)
    rows = _rows(tmp_path)
    _rewrite(tmp_path / "certified-gaps.csv", rows[1:])
    messages: list[str] = []
    calls: list = []
    monkeypatch.setattr(cg, "certify", _stand_in(calls))
    cg.run(tmp_path, time_limits=1, report=messages.append, **small)
    assert len(calls) == 1
    assert any("only some of the instance's rows" in m for m in messages), messages
    again = _rows(tmp_path)
    assert len(again) == len(rows)
    assert {r["policy"] for r in again} == set(cg.CERTIFIED_POLICIES)
    assert len({r["bound"] for r in again}) == 1


def test_a_plugin_policy_is_a_column_and_leaves_the_table_with_its_rows(
    own_policy, tmp_path, monkeypatch
):
    """Issue 22, item 12: ``policies`` gives the columns; the best schedule of the table comes
    from the rows it shows, so a policy left out of a rerun never shows in 'best by'."""
    from lpsched.policies.registry import import_plugins

    import_plugins([own_policy.module])
    monkeypatch.setattr(cg, "certify", _stand_in([], policy="fcfs"))  # certify finds FCFS, 96
    small = {"sizes": [6], "seeds": [0], "workloads": ["scaled-mix"], "time_limits": 1}
    table = cg.run(tmp_path, policies=["mcsf", own_policy.name], progress=False, **small)
    inst = cg.certified_instance("scaled-mix", 6, 0)
    tels = {"fcfs": 96, "mcsf": 61, own_policy.name: 53}  # recorded from the executor
    assert run_policy(inst, "fcfs").tel == tels["fcfs"] and own_policy.tel(inst) == 53
    assert run_policy(inst, "mcsf").tel == tels["mcsf"]
    rows = _rows(tmp_path)
    assert [(r["policy"], int(r["tel"]), r["best_method"]) for r in rows] == [
        ("mcsf", 61, own_policy.name),
        (own_policy.name, 53, own_policy.name),
    ]
    cells = _table_rows(table)[("scaled-mix", "6")]
    assert list(cells)[5:7] == ["mcsf", own_policy.name]
    assert cells["best by"] == f"{own_policy.name} 1"
    bound = float(rows[0]["bound"])
    assert cells["best / bound"] == f"{53 / bound:.3f} / {53 / bound:.3f}"

    messages: list[str] = []
    again = cg.run(tmp_path, policies=["mcsf"], progress=False, report=messages.append, **small)
    assert any("reused 1 of 1" in m for m in messages)
    cells = _table_rows(again)[("scaled-mix", "6")]
    assert own_policy.name not in cells and cells["best by"] == "mcsf 1"
    assert cells["best / bound"] == f"{61 / bound:.3f} / {61 / bound:.3f}"

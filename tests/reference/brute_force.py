"""Shared test helpers for the exact model: the reference cases with their optimal TEL, LP value
and T1 (computed from SPEC.md by an implementation independent of lpsched), an independent brute
force written from SPEC section 2 only, and a hypothesis strategy of tiny instances."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from lpsched.instance import Instance
from lpsched.schedule import Schedule

# Reference cases (copied from the project's reference/cases.json, computed from SPEC.md by an
# implementation independent of lpsched): name, M, s_i, o_i, a_i, optimal TEL, LP value at T1, T1.
REFERENCE = [
    ("ref00", 22, "9 1 3 3 1 0", "1 7 8 5 4 8", "0 0 0 0 0 0", 38, 36.821429, 33),
    ("ref01", 15, "3 5 6 5 1 7 0 0 5", "3 4 2 1 3 2 1 5 4", "0 0 0 0 0 0 0 0 0", 46, 40.053217, 25),
    ("ref02", 28, "12 2 5 9 2 2", "1 1 5 1 3 6", "0 0 0 0 0 0", 18, 17.769231, 17),
    ("ref03", 37, "15 0 17 16 0", "2 2 3 4 8", "0 0 0 0 0", 25, 21.404504, 19),
    ("ref04", 23, "8 3 5 4 11 11 1", "2 1 7 6 4 4 5", "0 0 0 0 0 0 0", 49, 42.851992, 29),
    ("ref05", 32, "4 2 16 10 1 5", "1 7 2 4 1 2", "0 0 0 0 0 0", 20, 18.193772, 17),
    ("ref06", 28, "0 4 2 3 11 1 5", "8 3 1 8 3 1 3", "0 0 0 0 0 0 0", 31, 29.142857, 27),
    ("ref07", 24, "5 1 5 2 3", "1 5 5 2 7", "0 0 0 0 0", 20, 20.0, 20),
    ("ref08", 23, "1 2 1 2 3 5 4 8", "8 6 4 5 6 7 5 1", "0 0 0 0 0 0 0 0", 60, 57.447687, 42),
    ("ref09", 24, "11 4 3 4 10 11 0", "3 7 7 7 4 4 4", "0 0 0 0 0 0 0", 64, 59.099243, 36),
    ("ref10", 12, "3 1 5 0", "2 8 7 7", "0 0 0 0", 38, 34.323186, 24),
    ("ref11", 29, "12 4 5 5 5 9", "3 8 2 1 8 4", "0 0 0 0 0 0", 34, 30.645278, 26),
    ("ref12", 14, "4 5 7 5 0 3 5 3", "2 5 3 7 3 5 2 5", "0 0 0 0 0 0 0 0", 70, 59.089202, 32),
    ("ref13", 35, "0 12 2 5 0", "6 4 2 7 4", "0 0 0 0 0", 23, 23.0, 23),
    ("ref14", 19, "5 4 3 3 0", "4 8 8 8 5", "0 0 0 0 0", 46, 45.25979, 33),
    ("ref15", 22, "2 9 3", "2 3 5", "0 0 0", 10, 10.0, 10),
    ("ref16", 20, "4 9 1 9 10 7 9 2", "1 3 3 3 4 3 3 3", "0 0 0 0 0 0 0 0", 49, 43.346154, 23),
    (
        "ref17",
        19,
        "3 9 5 1 6 4 2 8 0 5",
        "3 4 4 8 2 3 4 2 1 6",
        "0 0 0 0 0 0 0 0 0 0",
        70,
        63.833108,
        37,
    ),
    ("ref18", 13, "2 3 5 2 5 5 5", "6 8 1 6 1 5 8", "2 0 2 3 1 4 0", 81, 67.412526, 39),
    ("ref19", 35, "1 12 3 0", "7 2 8 2", "3 0 0 4", 19, 19.0, 23),
    ("ref20", 15, "7 3 5", "3 2 2", "3 1 3", 8, 7.222222, 10),
    (
        "ref21",
        27,
        "13 5 3 10 1 3 11 12 4",
        "1 4 4 1 7 4 4 2 7",
        "5 5 5 5 0 2 2 0 4",
        47,
        43.243656,
        39,
    ),
    ("ref22", 18, "2 7 3 5 1 1 0 9", "6 3 1 5 8 6 4 1", "1 1 3 4 5 1 5 3", 44, 40.960538, 39),
    (
        "ref23",
        29,
        "4 4 3 14 0 3 2 5 14 5",
        "5 5 8 4 6 2 3 1 1 1",
        "3 4 4 3 2 1 2 5 1 4",
        43,
        40.993026,
        41,
    ),
]


def ref_instance(case) -> Instance:
    name, memory, s, o, a = case[:5]

    def ints(text: str) -> list[int]:
        return [int(v) for v in text.split()]

    return Instance.from_arrays(ints(s), ints(o), memory, ints(a), name=name)


IDS = [c[0] for c in REFERENCE]


def brute_force_tel(inst: Instance) -> int:
    """Optimal TEL by depth-first search over start times (written from SPEC section 2 only).

    Starts range over ``a_i .. T1 - o_i``; a partial assignment is cut when some round holds more
    than ``M`` tokens or its latency plus the remaining ``sum o`` reaches the best TEL so far.
    The optimum found is confirmed with ``Schedule.feasible``.
    """
    s, o, a = inst.prefill.tolist(), inst.decode.tolist(), inst.arrival.tolist()
    n, M = inst.n, inst.memory
    T = max(a) + sum(o)
    mem = [0] * (T + 2)
    best = [math.inf, None]
    start = [0] * n
    rest = [sum(o[i:]) for i in range(n)] + [0]

    def dfs(i: int, tel: int) -> None:
        if tel + rest[i] >= best[0]:
            return
        if i == n:
            best[0], best[1] = tel, list(start)
            return
        for p in range(a[i], T - o[i] + 1):
            lat = p + o[i] - a[i]
            if tel + lat + rest[i + 1] >= best[0]:
                break
            if all(mem[p + j] + s[i] + j <= M for j in range(1, o[i] + 1)):
                for j in range(1, o[i] + 1):
                    mem[p + j] += s[i] + j
                start[i] = p
                dfs(i + 1, tel + lat)
                for j in range(1, o[i] + 1):
                    mem[p + j] -= s[i] + j

    dfs(0, 0)
    sched = Schedule(inst, np.asarray(best[1]))
    assert sched.feasible and sched.tel == best[0]
    return int(best[0])


@st.composite
def tiny_instances(draw, max_n: int = 6) -> Instance:
    memory = draw(st.integers(2, 14))
    n = draw(st.integers(1, max_n))
    o = [draw(st.integers(1, min(4, memory))) for _ in range(n)]
    s = [draw(st.integers(0, memory - oi)) for oi in o]
    if draw(st.booleans()):
        s = [s[0]] * n if draw(st.booleans()) else s  # identical prefill, often identical requests
        o = [o[0]] * n if draw(st.booleans()) else o
        s = [min(si, memory - oi) for si, oi in zip(s, o, strict=True)]
    a = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)) if draw(st.booleans()) else None
    return Instance.from_arrays(s, o, memory, a, name="tiny")

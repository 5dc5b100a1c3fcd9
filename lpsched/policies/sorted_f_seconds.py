"""Sorted-F in seconds: Phase-1 batches that minimise the seconds analogue of ``F(X)`` under a
time model (SPEC sections 4 and 10). Source: ours.

**Why this is the natural analogue.** Sorted-F's ``F(X) = sum_{i in X} o_i / |X|^2`` is a
Smith ratio: a batch ``X`` of ``k = |X|`` requests, run together, does ``sum o_i``
request-rounds of work, that is ``R(X) = sum o_i / k`` rounds of a full batch, and holds up
every request behind it for those rounds; ordering batches by "time held / requests served" =
``R(X) / k`` is Smith's rule (W. E. Smith, Naval Res. Logist. Q. 3, 1956), and Phase 1 takes
the batch with the smallest ratio first. In rounds every round lasts one unit, so the time
held is ``R(X)``. In seconds (SPEC section 10) round ``t`` lasts ``f(P_t, D_t, K_t)``, so the
time a batch holds the others up is its rounds' seconds. Read the same way as ``F`` reads the
batch -- ``R(X)`` rounds with all ``k`` requests running -- those are

    T(X) = R(X) f(0, k, K(X)) + sum_{i in X} pi_i   (seconds),

with ``K(X) = A(X) / R(X)`` the KV-cache tokens the batch holds on average, ``A(X) = sum_i (o_i
s_i + o_i (o_i + 1) / 2)`` its token-rounds (SPEC section 7), and ``pi_i = f(s_i, 0, 0) - f(0,
0, 0)`` the seconds request ``i``'s prefill adds to the round it starts in (each prompt counted
in a round of its own, as continuous batching starts requests one by one when memory frees;
clipped at 0). The seconds Smith ratio is

    F_s(X) = T(X) / k = F(X) * rho(X),   rho(X) = f(0, k, K(X)) + (sum_i pi_i) / R(X),

``rho(X)`` being the batch's mean seconds per round. Under ``unit`` (every round 1 s) ``rho =
1`` and ``F_s = F``; under a constant round duration ``F_s`` is a multiple of ``F``: the same
batches. Under a fitted profile (``linear``: ``T(X) = R base_s + decode_request_s sum o_i +
kv_token_s A(X) + sum_i (prefill_token_s s_i + prefill_token2_s s_i^2)``) a batch pays for
its prompts and for every request it runs, so long prompts and very large batches of short
requests lose part of the advantage ``F`` gives them.

**Measured** (``docs/results/headline.md``, "In seconds"; ``paper-mix``, n = 2000, M = 16,492,
seeds 0-4): 6% lower mean latency in seconds than Sorted-F under both fitted profiles, and 3-4%
lower in rounds. Planned with the prefill terms set to 0 it is Sorted-F again (1.000): the gain
comes from charging each prompt its prefill seconds, not from the batch-size terms.

**Solver.** The ``swap`` local search of :func:`lpsched.policies.sorted_f.select_swap` on
``F_s`` in place of ``F``: the same two greedy starts (by ``o_i``, by ``s_i + o_i``), the same
neighbourhoods (add one request, remove one, swap one in for one out) searched whole by
best improvement while ``F_s`` falls strictly, the same tie rules. Under ``unit`` every
comparison of ``F_s`` is the comparison of ``F`` (``rho = 1.0`` exactly, and ``sum o / k^2``
rounded to float64 keeps the order of the exact rationals while ``sum o`` and ``k`` stay below
about ``2^20``), so the batches, the list and the schedule are those of Sorted-F with
``solver="swap"``. Each pass evaluates the model once on the candidates of each neighbourhood,
vectorised: all ``O(k (r - k))`` swaps for a general model; for a ``linear`` one (the fitted
profiles), where ``F_s`` at a fixed ``|X|`` is affine in ``(sum o, A, sum pi)``, only the
swaps that can be best, found in ``O((k + r) log k)`` (:func:`_swap_grid`), with the same moves.
At n = 2000 (``paper-mix``, M = 16,492) that is about 0.7 s, against 0.2 s for Sorted-F.

**What it does not change.** Phase 2 is the executor of every list policy, and the schedule is
still in rounds; the time model enters only the choice of the batches. The MIP, the LP and
their bounds (SPEC sections 3 and 7) still optimise rounds (TEL in rounds), so no bound here is
a bound in seconds.
"""

from __future__ import annotations

import numpy as np

from ..instance import Instance
from ..timing import TimeModel, parse_time_model
from ..timing.builtin import linear
from .sorted_f import batches_by_selection, best_of_two_starts, greedy_fill

__all__ = ["DEFAULT_TIME_MODEL", "batch_seconds_ratio", "select_seconds", "sorted_f_seconds_order"]

#: The time model of the policy when none is given: Llama-2-70B on two A100s, the setting of
#: Jaillet et al. (arXiv 2502.07115), fitted in ``docs/results/time-profile.md``.
DEFAULT_TIME_MODEL = "llama2-70b-a100x2"


def _ratio(
    model: TimeModel, num: np.ndarray, k: np.ndarray, area: np.ndarray, prefill_s: np.ndarray
) -> np.ndarray:
    """``F_s = (num / k^2) rho`` elementwise (module docstring), ``num = sum o``, ``area = A``,
    ``prefill_s = sum pi``; float64, shape of ``num``."""
    k = np.asarray(k, dtype=np.int64)
    numf = np.asarray(num, dtype=np.float64)
    kf = k.astype(np.float64)
    per_round = kf / numf  # 1 / R, R = sum o / k rounds
    kv = np.asarray(area, dtype=np.float64) * per_round  # K(X) = A / R
    flat = k.ravel()
    rho = model.durations(np.zeros(flat.shape, dtype=np.int64), flat, kv.ravel()).reshape(k.shape)
    with np.errstate(over="ignore"):  # inf: refused where it matters (_search)
        rho += np.asarray(prefill_s, dtype=np.float64) * per_round
        return (numf / (kf * kf)) * rho


def batch_seconds_ratio(
    decode: np.ndarray,
    prefill: np.ndarray,
    time_model: str | TimeModel = DEFAULT_TIME_MODEL,
) -> float:
    """``F_s(X)``, the seconds analogue of ``F(X)``, of one batch (module docstring).

    Parameters
    ----------
    decode, prefill : ndarray of int, shape (k,), k >= 1
        ``o_i`` (tokens, each >= 1) and ``s_i`` (tokens) of the batch.
    time_model : str or TimeModel
        The round durations ``f(P, D, K)`` (a registry spec, SPEC section 10).

    Returns
    -------
    float
        ``F_s(X) = T(X) / |X|`` in seconds per request: the seconds the batch holds the
        requests behind it up, per request it serves. Under ``unit`` it is ``F(X)``.

    Notes
    -----
    Source: ours (Smith's ratio of arXiv 2508.06133's ``F`` with the batch's rounds read in
    seconds).
    """
    model = parse_time_model(time_model)
    o = np.asarray(decode, dtype=np.int64)
    s = np.asarray(prefill, dtype=np.int64)
    pi = _prefill_seconds(model, s)
    area = int(np.sum(o * s + o * (o + 1) // 2))
    return float(
        _ratio(
            model, np.array([o.sum()]), np.array([o.size]), np.array([area]), np.array([pi.sum()])
        )[0]
    )


def _prefill_seconds(model: TimeModel, prefill: np.ndarray) -> np.ndarray:
    """``pi_i = max(0, f(s_i, 0, 0) - f(0, 0, 0))`` seconds, shape of ``prefill``."""
    zeros = np.zeros(prefill.shape, dtype=np.int64)
    return np.maximum(model.durations(prefill, zeros, zeros) - model.idle_s, 0.0)


def select_seconds(
    decode: np.ndarray, size: np.ndarray, memory: int, time_model: str | TimeModel
) -> np.ndarray:
    """Phase-1 batch minimising ``F_s`` by local search (the ``swap`` search on ``F_s``).

    Parameters
    ----------
    decode, size, memory
        As for :func:`lpsched.policies.sorted_f.select_dp`.
    time_model : str or TimeModel
        The round durations (SPEC section 10).

    Returns
    -------
    ndarray of int64, shape (k,)
        Ascending positions of a feasible batch ``X`` (``sum (s_i + o_i) <= M``).

    Notes
    -----
    As :func:`lpsched.policies.sorted_f.select_swap` with ``F_s`` for ``F`` (module
    docstring): under ``unit`` the same batch. Source: ours.
    """
    model = parse_time_model(time_model)
    o = np.asarray(decode, dtype=np.int64)
    z = np.asarray(size, dtype=np.int64)
    s = z - o
    area = o * s + o * (o + 1) // 2
    pi = _prefill_seconds(model, s)

    def search(order: np.ndarray) -> tuple[np.ndarray, float, int]:
        inx, value = _search(model, o, z, area, pi, memory, greedy_fill(z, order, memory))
        return inx, value, int(inx.sum())

    return best_of_two_starts(o, z, search)


def _affine(model: TimeModel) -> tuple[float, float, float] | None:
    """``(base_s, decode_request_s, kv_token_s)`` when ``model`` is
    :func:`~lpsched.timing.builtin.linear` (a fitted profile, ``linear``), else None. For such
    a model, at a fixed ``k``, ``F_s = alpha sum o + beta A + gamma sum pi`` with ``alpha =
    (base_s + decode_request_s k) / k^2``, ``beta = kv_token_s / k``, ``gamma = 1 / k``."""
    if model.function is not linear:
        return None
    c = model.values
    return c["base_s"], c["decode_request_s"], c["kv_token_s"]


#: Relative slack of the swap pre-selection (:func:`_swap_grid`): far above the float64 error
#: of the affine form, so that every swap the exact ``F_s`` could prefer is kept.
_SLACK = 1e-7


def _swap_grid(
    affine: tuple[float, float, float] | None,
    o: np.ndarray,
    z: np.ndarray,
    area: np.ndarray,
    pi: np.ndarray,
    xi: np.ndarray,
    yj: np.ndarray,
    free: int,
    k: int,
    cur: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The rows (positions in ``xi``) and columns (in ``yj``), ascending, of the swap grid to
    evaluate exactly: for a general model every row and the columns that fit for some row; for
    an affine one (:func:`_affine`) only
    those that can hold a best swap. There ``F_s`` of the swap ``i -> j`` is ``F_s(X) + u_j -
    u_i`` with ``u = alpha o + beta a + gamma pi``; for each ``j`` the best feasible ``i`` (``z_i
    >= z_j - free``) is a suffix maximum of ``u`` over the batch sorted by ``z``, which gives
    the least value ``m`` in ``O((k + r) log k)``; the columns within a slack of ``m``, and the
    rows that could reach it with one of them, are kept. The exact evaluation of this sub-grid
    then picks what the whole grid would (the rows and columns keep their order)."""
    if affine is None:
        ok = (z[yj][None, :] - z[xi][:, None]) <= free
        return np.arange(xi.size), np.flatnonzero(ok.any(axis=0))  # j that fit for some i
    base, per_request, per_kv = affine
    u = ((base + per_request * k) / (k * k)) * o + (per_kv / k) * area + pi / k
    ux, uy = u[xi], u[yj]
    by_z = np.argsort(z[xi], kind="stable")
    zs = z[xi][by_z]
    best_in = np.maximum.accumulate(ux[by_z][::-1])[::-1]  # max u over zs[q:]
    at = np.searchsorted(zs, z[yj] - free, side="left")
    fits = at < xi.size
    if not fits.any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    val = np.full(yj.size, np.inf)
    val[fits] = uy[fits] - best_in[at[fits]]
    least = float(val.min())
    slack = _SLACK * (abs(least) + abs(cur) + float(np.abs(u).max()))
    cols = np.flatnonzero(val <= least + slack)
    rows = np.flatnonzero(ux >= float(uy[cols].min()) - least - slack)
    return rows, cols


def _search(
    model: TimeModel,
    o: np.ndarray,
    z: np.ndarray,
    area: np.ndarray,
    pi: np.ndarray,
    memory: int,
    inx: np.ndarray,
) -> tuple[np.ndarray, float]:
    """Best-improvement add / remove / swap search on ``F_s`` from the feasible mask ``inx``;
    the local minimum and its ``F_s``. Mirrors ``sorted_f_readings.local_search`` move for move."""
    inx = inx.copy()
    affine = _affine(model)
    used = int(z[inx].sum())
    num, k, a, p = int(o[inx].sum()), int(inx.sum()), int(area[inx].sum()), float(pi[inx].sum())
    cur = float(_ratio(model, np.array([num]), np.array([k]), np.array([a]), np.array([p]))[0])
    model.require_finite(cur, "F_s of the first batch (its seconds per request)")
    while True:
        xi, yj = np.flatnonzero(inx), np.flatnonzero(~inx)
        free = memory - used
        best: tuple[float, str, int, int] | None = None  # (F_s, move, out, in)
        if yj.size:
            fits = yj[z[yj] <= free]
            if fits.size:
                v = _ratio(
                    model, num + o[fits], np.full(fits.size, k + 1), a + area[fits], p + pi[fits]
                )
                j = int(np.argmin(v))
                best = (float(v[j]), "add", -1, int(fits[j]))
        if k >= 2:
            v = _ratio(model, num - o[xi], np.full(xi.size, k - 1), a - area[xi], p - pi[xi])
            i = int(np.argmin(v))
            if best is None or v[i] < best[0]:
                best = (float(v[i]), "remove", int(xi[i]), -1)
        if yj.size and k:
            rows, cols = _swap_grid(affine, o, z, area, pi, xi, yj, free, k, cur)
            if rows.size and cols.size:
                ii, jj = xi[rows], yj[cols]
                ok = (z[jj][None, :] - z[ii][:, None]) <= free
                v = _ratio(
                    model,
                    (num + o[jj])[None, :] - o[ii][:, None],
                    np.full(ok.shape, k),
                    (a + area[jj])[None, :] - area[ii][:, None],
                    (p + pi[jj])[None, :] - pi[ii][:, None],
                )
                v[~ok] = np.inf
                r, c = np.unravel_index(int(np.argmin(v)), v.shape)
                if v[r, c] < cur and (best is None or v[r, c] < best[0]):
                    best = (float(v[r, c]), "swap", int(ii[r]), int(jj[c]))
        if best is None or not best[0] < cur:
            return inx, cur
        value, move, i, j = best
        if move in ("remove", "swap"):
            inx[i] = False
            used -= int(z[i])
            num, k, a, p = num - int(o[i]), k - 1, a - int(area[i]), p - float(pi[i])
        if move in ("add", "swap"):
            inx[j] = True
            used += int(z[j])
            num, k, a, p = num + int(o[j]), k + 1, a + int(area[j]), p + float(pi[j])
        cur = value


def sorted_f_seconds_order(
    instance: Instance, time_model: str | TimeModel = DEFAULT_TIME_MODEL
) -> np.ndarray:
    """The Sorted-F-in-seconds priority list: Phase-1 batches minimising ``F_s`` under
    ``time_model``, concatenated, each sorted by ``o_i`` then index.

    Parameters
    ----------
    instance : Instance
        Requests (``s_i``, ``o_i``; arrivals are left to the executor, as Sorted-F does) and
        KV-cache budget ``M`` (tokens).
    time_model : str or TimeModel, default :data:`DEFAULT_TIME_MODEL`
        The round durations the batches are chosen under: a registry spec ``NAME[:key=value,
        ...]`` (``llama2-70b-a100x2``, ``llama2-7b-a100x1``, ``unit``, ``linear:...``) or a
        model.

    Returns
    -------
    ndarray of int64, shape (n,)
        The list ``L`` for the executor; under ``unit`` that of ``sorted-f`` with
        ``solver="swap"``.

    Raises
    ------
    KeyError
        An unknown time-model name.
    TimeModelError
        A malformed spec, or a model giving a duration that is not a positive finite number.

    Notes
    -----
    Source: ours (module docstring); Sorted-F itself: arXiv 2508.06133, section 4.
    """
    model = parse_time_model(time_model)
    o = instance.decode
    z = instance.prefill + o

    def select(decode: np.ndarray, size: np.ndarray, memory: int) -> np.ndarray:
        return select_seconds(decode, size, memory, model)

    batches = batches_by_selection(o, z, instance.memory, select)
    return np.concatenate(batches) if batches else np.zeros(0, dtype=np.int64)

"""What knowing the decode lengths is worth: the best blind policy's TEL over the best
clairvoyant one's, per instance group of the ``algorithms`` reproduction.

A policy is *blind* when it is told nothing of the decode lengths or only a class bit, and
*clairvoyant* when it is told them (:func:`~.algorithm_claims.knows`); policies told intervals
(A_min) are neither and are left out. On each instance the best TEL of each side is taken
(and that of the policies told nothing at all, a class bit excluded); the table gives, per
group, the mean TELs of the bests and the ratios best blind / best clairvoyant and best told
nothing / best clairvoyant (mean and max over the instances), with the policies that were
best.

Source: ours.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ...sweeps.tables import counts, markdown_table, mean_max
from .algorithm_claims import knows

__all__ = ["knowing_table"]

#: The sides compared: name -> what the policies of that side know (:func:`knows`).
_SIDES = {"blind": ("nothing", "class"), "nothing": ("nothing",), "clairvoyant": ("lengths",)}


def knowing_table(
    policy_rows: Sequence[Mapping[str, str]],
    group: Callable[[Mapping[str, str]], tuple[tuple[int, int, int], str]],
    instance: Callable[[Mapping[str, str]], tuple[str, ...]],
) -> str:
    """Markdown: per instance group, the best blind, best told-nothing and best clairvoyant
    policy, their mean TEL (rounds) and the ratios to the clairvoyant one.

    Parameters
    ----------
    policy_rows : sequence of mapping
        Rows of the policies sweep (``policy`` and ``tel``, CSV text; an empty TEL is a
        refusal and is skipped).
    group : callable
        ``group(row) -> (sort key, header)`` of a row's instance group.
    instance : callable
        ``instance(row) -> key`` identifying a row's instance.

    Returns
    -------
    str
        The table, or a sentence when no group has both a blind and a clairvoyant TEL.
    """
    best: dict[tuple[str, ...], dict[str, tuple[int, str]]] = {}
    header: dict[tuple[str, ...], tuple[tuple[int, int, int], str]] = {}
    for r in policy_rows:
        if r["tel"] == "":
            continue
        key, tel, knew = instance(r), int(r["tel"]), knows(r["policy"])
        header[key] = group(r)
        mine = best.setdefault(key, {})
        for side, of in _SIDES.items():
            if knew in of and (side not in mine or tel < mine[side][0]):
                mine[side] = (tel, r["policy"])
    groups: dict[tuple[tuple[int, int, int], str], list[dict[str, tuple[int, str]]]] = {}
    for key, sides in best.items():
        if "blind" in sides and "clairvoyant" in sides:
            groups.setdefault(header[key], []).append(sides)
    if not groups:
        return "No instance group has both a blind and a clairvoyant policy's TEL."
    out = []
    for (_, head), items in sorted(groups.items()):
        row = {"instances": head, "n instances": str(len(items))}
        clair = [b["clairvoyant"][0] for b in items]
        for side in _SIDES:
            got = [b[side] for b in items if side in b]
            if not got:
                row[f"best {side}: mean TEL (who)"] = "-"
                continue
            who = counts([p for _, p in got])
            row[f"best {side}: mean TEL (who)"] = (
                f"{sum(t for t, _ in got) / len(got):,.0f} ({who})"
            )
            if side != "clairvoyant":
                row[f"{side} / clairvoyant mean / max"] = mean_max(
                    [b[side][0] / c for b, c in zip(items, clair, strict=True) if side in b]
                )
        out.append(row)
    headers = list(dict.fromkeys(k for row in out for k in row))
    return markdown_table(
        [{h: row.get(h, "-") for h in headers} for row in out], headers, numparse=False
    )

"""What each policy of the ``algorithms`` reproduction is told and what is proven of it.

:data:`TOLD` says what a policy knows of the decode lengths besides the prompts ``s_i``: the
lengths ``o_i`` (clairvoyant), prediction intervals, one class bit, or nothing (a blind policy
of SPEC section 11 learns ``o_i`` only when the request completes). :data:`PROVEN` gives each
policy's proven ratio for TEL, its assumptions and its source. :func:`knows` sorts a policy
into clairvoyant, interval, blind or unknown, for the table of what knowing the decode lengths
is worth (:mod:`.knowing`): blind means told nothing or a class bit.

Source: the algorithms' papers as cited (``/work/shared/research/algorithms-2026.md``
summarises them); the sorting is ours.
"""

from __future__ import annotations

__all__ = ["LENGTHS", "INTERVALS", "NOTHING", "CLASS_BIT", "TOLD", "PROVEN", "knows"]

#: Told the decode lengths.
LENGTHS = "decode lengths o_i"
#: Told prediction intervals.
INTERVALS = "intervals l_i <= o_i <= u_i"
#: Told nothing of the decode lengths (``o_i`` seen only at completion).
NOTHING = "nothing"
#: Told one bit per request (SPEC section 11.2).
CLASS_BIT = "its class o_i > T"

#: What each policy is told about the decode lengths (every policy knows the prompts s_i).
TOLD: dict[str, str] = {
    **dict.fromkeys(
        "svf volume sps gba gba-d sorted-f sorted-lp lp-swap mcsf size sorted-f-seconds "
        "vllm-sf online-mcsf online-sorted-f".split(),
        LENGTHS,
    ),
    **dict.fromkeys(("amin", "amax", "sorted-f-amin"), INTERVALS),
    **dict.fromkeys(
        ("fcfs", "vllm", "online-fcfs", "gsa", "gsa-spec", "rect", "response", "route"), NOTHING
    ),
    "svf-1bit": CLASS_BIT,
}

_ROUTING = "arXiv 2607.09248 (summary)"
_AT_ZERO = "all at round 0, o_i unknown, kill and restart"
#: Proven approximation ratio of each policy for TEL: (ratio, assumptions, source).
PROVEN: dict[str, tuple[str, str, str]] = {
    "sorted-f": ("48", "any instance, all at round 0", "arXiv 2508.06133"),
    "svf": (
        "1 + 2/(1 - alpha)",
        "every s_i + o_i <= alpha M, all at round 0",
        "arXiv 2606.22327",
    ),
    "gba": ("10.67 (6.75 large memory)", "one common prompt length", "arXiv 2601.22996"),
    "gba-d": (
        "10.67 (6.75 large memory), as GBA",
        "one common prompt length",
        "arXiv 2601.22996 (summary)",
    ),
    "sps": ("2", "requests of one length, one common prompt length", "arXiv 2601.22996"),
    "amin": (
        "O(log(u/l)) (log-scale)",
        "one common prompt, one interval [l, u] for all; none for heterogeneous prompts",
        "arXiv 2508.14544",
    ),
    **{p: ("unbounded", "", "arXiv 2508.06133") for p in ("fcfs", "mcsf", "size")},
    "volume": (
        "none published; SVF's 1 + 2/(1 - alpha) carries over",
        "as SVF: SVF's proof needs only 'while a request waits, the running peaks exceed "
        "M - P', which the look-ahead executor also gives",
        "SPEC 4.1, ours",
    ),
    **{p: ("none proven", "", "") for p in ("sorted-lp", "lp-swap", "vllm")},
    "gsa": (
        "61.92 (32 large memory)",
        f"one common prompt length, {_AT_ZERO}",
        "arXiv 2601.22996",
    ),
    "gsa-spec": (
        "61.92 (32 large memory), as GSA",
        f"one common prompt length, {_AT_ZERO}",
        "arXiv 2601.22996 (stated for GSA; for GSA-Spec ours)",
    ),
    "svf-1bit": ("not recovered", "a short / long class bit, all at round 0", "arXiv 2606.22327"),
    "rect": (
        "36",
        f"every s_i > M/4, or every s_i <= M/4 with o_i <= s_i; {_AT_ZERO}",
        _ROUTING,
    ),
    "response": ("236/3 = 78.67", f"every s_i <= M/4 with o_i > s_i; {_AT_ZERO}", _ROUTING),
    "route": ("O(1), constant not recovered", _AT_ZERO, _ROUTING),
}


def knows(policy: str) -> str:
    """What ``policy`` (``name[+backfill]``) knows of the decode lengths: ``"lengths"``,
    ``"intervals"``, ``"class"`` (a class bit), ``"nothing"`` or ``"unknown"`` (not in
    :data:`TOLD`); the last three but one are the blind policies. Source: ours."""
    told = TOLD.get(policy.partition("+")[0])
    return {LENGTHS: "lengths", INTERVALS: "intervals", CLASS_BIT: "class", NOTHING: "nothing"}.get(
        told or "", "unknown"
    )

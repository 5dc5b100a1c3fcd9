#!/usr/bin/env python3
"""Fit lpsched's ``linear`` round-duration form to Vidur's public per-operator profiling data.

lpsched's time model (docs/SPEC.md, section 10) gives round t the duration

    d = base_s + prefill_token_s*P + prefill_token2_s*P**2 + decode_request_s*D + kv_token_s*K

with P the prefill tokens started in the round, D the requests running in it (each emits one
token) and K the KV-cache tokens held. This script rebuilds, from Vidur's profiling tables, the
batch time that Vidur's execution-time predictor gives such a round (``vidur_round_seconds``), on
a grid of batch compositions relevant to lpsched workloads, fits the five coefficients by
non-negative least squares on relative errors, writes ``lpsched/data/time_profiles.json`` and
prints the fit-error tables and sanity checks of docs/results/time-profile.md.

Re-run (the command that wrote the shipped file; VIDUR is a clone of microsoft/vidur, bare or
not, holding commit 7d47513363ec447a741ac5e47241580b47724fbf)::

    python3 scripts/fit_time_profile.py --vidur-git-dir VIDUR/.git \
        -o lpsched/data/time_profiles.json

or ``--vidur-dir VIDUR`` for a work tree checked out at that commit. It uses numpy and the
standard library only, and ``lpsched`` (when importable) for the check on real schedules.

Data (at the pinned Vidur commit):

* ``data/profiling/compute/a100/meta-llama/Llama-2-{70b,7b}-hf/mlp.csv``: every per-layer
  operator but attention (QKV and output projections, MLP up/down/activation, the two RMS norms,
  rotary embedding, residual add), per ``num_tensor_parallel_workers``;
* ``data/profiling/network/a100_pairwise_nvlink/all_reduce.csv``: the tensor-parallel all-reduce
  (Vidur's default ``network_device``; 2 workers on one NVLink pair);
* ``vidur/config/model_config.py``: layers, heads, widths (copied into ``MODELS``);
* the attention kernels of ``.../attention.csv``. These are Vidur's largest blobs; when the clone
  holds the one a profile needs, it is used as is. Otherwise (the clone used here lacks them) the
  script uses ``ATTENTION_EXTRACT``: rows transcribed from Vidur's ``Llama-2-7b-hf/attention.csv``
  (added in bee57da together with the 70B file, by the same profiler; 10,680,357 bytes, read from
  the public copy sw5sh/cs378-assignment3 at 7ac2fe9fb6cea9d4630659a10c5cccfc9fbdd776, whose size
  equals that of Vidur's file). For Llama-2-70B with tensor parallelism 2 (32 query and 4 KV heads
  of dimension 128 per GPU) the rows are matched by per-GPU heads: prefill attention
  (compute-bound, grows with query heads) from the 7B rows with 1 worker (32 query heads per GPU),
  decode attention (bandwidth-bound, grows with the KV heads read) from the 7B rows with 8 workers
  (4 KV heads per GPU).

How Vidur combines the operators (vidur/execution_time_predictor/*.py, vidur/entities/
execution_time.py), mirrored here: per layer, the token-wise operators at the batch's token count
rounded up to 8, decode attention at (decode batch size, mean KV length rounded up to 64),
prefill attention at (cached KV = 0 for whole prompts, sqrt of the sum of squared chunk sizes),
each attention part x1.1 for GQA models when it batches more than one request, and two
all-reduces per layer (attention, MLP) each with Vidur's 0.02 ms NCCL launch overhead; times the
number of layers. Vidur counts no embedding or LM-head time, and its CPU-overhead model is off by
default (its input files are not in the repository), so neither is included. Vidur fits random
forests to the tables and predicts only inside their range (4,096 tokens); here the tables are
interpolated directly and continued beyond their range as ``Operator``, ``PrefillAttention`` and
``DecodeAttention`` describe.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

VIDUR_COMMIT = "7d47513363ec447a741ac5e47241580b47724fbf"
VIDUR_REPOSITORY = "microsoft/vidur"

# vidur/config/model_config.py at VIDUR_COMMIT (Llama2_70BModelConfig, Llama2_7BModelConfig).
MODELS = {
    "meta-llama/Llama-2-70b-hf": {
        "num_layers": 80,
        "num_q_heads": 64,
        "num_kv_heads": 8,
        "embedding_dim": 8192,
        "mlp_hidden_dim": 28672,
        "vocab_size": 32768,
        "post_attn_norm": True,
    },
    "meta-llama/Llama-2-7b-hf": {
        "num_layers": 32,
        "num_q_heads": 32,
        "num_kv_heads": 32,
        "embedding_dim": 4096,
        "mlp_hidden_dim": 11008,
        "vocab_size": 32768,
        "post_attn_norm": True,
    },
}

# BaseExecutionTimePredictorConfig defaults at VIDUR_COMMIT.
KV_CACHE_PREDICTION_GRANULARITY = 64
ATTENTION_BATCHING_OVERHEAD_FRACTION = 0.1  # prefill and decode alike; GQA models only
NCCL_CPU_LAUNCH_OVERHEAD_MS = 0.02
NCCL_CPU_SKEW_OVERHEAD_PER_DEVICE_MS = 0.0
BLOCK_SIZE = 16

TOKEN_OPS = [
    "attn_pre_proj",
    "attn_post_proj",
    "mlp_up_proj",
    "mlp_down_proj",
    "mlp_act",
    "input_layernorm",
    "post_attention_layernorm",
    "attn_rope",
    "add",
]

ATTENTION_PROXY_SOURCE = {
    "path": "data/profiling/compute/a100/meta-llama/Llama-2-7b-hf/attention.csv",
    "vidur_commit": "bee57da (unchanged up to " + VIDUR_COMMIT[:7] + ")",
    "copy": "sw5sh/cs378-assignment3@7ac2fe9fb6cea9d4630659a10c5cccfc9fbdd776",
    "bytes": 10680357,
}

# ATTENTION_EXTRACT: rows of Vidur's Llama-2-7b-hf/attention.csv (A100, block size 16,
# AttentionBackend.FLASH_ATTENTION, n_embd 4096, n_q_head = n_kv_head = 32) as transcribed:
# time_stats.attn_prefill.median / time_stats.attn_decode.median in ms.  One line per table:
# "prefill W" = rows with W workers, batch 1, kv_cache_size 0, as "chunk:ms";
# "decode W KV" = rows with W workers and that kv_cache_size, as "batch:ms".
ATTENTION_EXTRACT = """
prefill 1: 112:.015 512:.103 992:.256 1024:.262 1984:.748 2048:.781 2624:1.182 2688:1.245
  3648:2.219 3712:2.255 3776:2.372 3840:2.395 3904:2.565 3968:2.592 4032:2.673 4096:2.7335
decode 8 160: 60:.026 64:.026 72:.030 80:.031 88:.033 96:.035 100:.037 104:.038 108:.040
  112:.046 116:.047 120:.047 124:.049 128:.051
decode 8 192: 1:.012 10:.012 16:.012 22:.012
decode 8 1024: 52:.081 54:.081 55:.105 58:.121 64:.122 72:.124 80:.126 88:.131 96:.139
  100:.143 104:.147 108:.151 109:.168 112:.183 116:.184 120:.186 124:.189 128:.189
decode 8 1088: 1:.013 2:.014 4:.015 6:.017 8:.020 10:.021 11:.024 12:.024 13:.025
decode 8 1984: 94:.234 96:.239 100:.245 104:.255 108:.263 109:.294 112:.319 116:.324
  120:.327 124:.329 128:.333
decode 8 2048: 1:.015 2:.016 4:.018 6:.024 8:.031 10:.041 12:.048 14:.060 16:.058 20:.073
  24:.078 28:.108 32:.110 36:.114 40:.118 44:.128 48:.131 50:.142 54:.149
decode 8 3968: 70:.408 72:.406 76:.412 80:.413 84:.419 88:.429 92:.451 96:.471 100:.497
  104:.518 108:.535 109:.590 112:.634 116:.648 120:.653 124:.663 128:.664
decode 8 4032: 1:.018 2:.019 3:.025 4:.030 5:.039 6:.047 7:.052 8:.056 9:.059 10:.067
  11:.074 12:.078 13:.082 14:.100 16:.093 17:.097 18:.103 19:.119 20:.120 21:.121 22:.129
  23:.133 24:.136 25:.137 26:.142 27:.145 28:.195
decode 1 32: 1:.009 4:.012 7:.017 8:.018 10:.020 16:.028 20:.030 24:.038 28:.044 32:.048
  36:.055 40:.059 44:.067 48:.073 50:.075 56:.084 60:.090 64:.097 70:.105 72:.109 80:.120
  84:.126 86:.128
decode 1 1024: 5:.069 6:.075 7:.104 8:.121 10:.125 12:.139 14:.180 16:.187 20:.212 24:.255
  28:.293 32:.326 36:.363 40:.393 44:.428 48:.465 52:.491 56:.533 60:.564 64:.594 68:.633
  72:.666 76:.699 80:.727 84:.757 88:.790 90:.807
decode 1 3968: 83:2.877 84:2.912 88:3.033 92:3.152 96:3.286 100:3.363 104:3.495 108:3.560
  112:3.704 116:3.832 120:3.941 124:4.047 128:4.151
decode 1 4032: 1:.054 2:.091 3:.128 4:.195 5:.216 6:.239 7:.403 8:.407 10:.415 12:.478
  14:.653 16:.676 18:.718 20:.792 21:.914 24:.949 28:1.150 32:1.231 36:1.396 40:1.507
"""


def _extract_tables() -> dict[tuple, dict[int, float]]:
    tables: dict[tuple, dict[int, float]] = {}
    key: tuple = ()
    for line in ATTENTION_EXTRACT.strip().splitlines():
        if not line.startswith(" "):
            head, line = line.split(":", 1)
            key = tuple([head.split()[0]] + [int(v) for v in head.split()[1:]])
            tables[key] = {}
        for pair in line.split():
            x, t = pair.split(":")
            tables[key][int(x)] = float(t)
    return tables


def attention_extract_rows(prefill_workers: int, decode_workers: int) -> list[dict]:
    """The transcribed attention rows as csv-like dicts (prefill rows from ``prefill_workers``)."""
    tables = _extract_tables()
    rows = [
        {"batch_size": 1, "prefill_chunk_size": c, "kv_cache_size": 0, "attn_prefill": t}
        for c, t in tables[("prefill", prefill_workers)].items()
    ]
    for (kind, *rest), by_batch in tables.items():
        if kind == "decode" and rest[0] == decode_workers:
            rows += [
                {
                    "batch_size": b,
                    "prefill_chunk_size": 0,
                    "kv_cache_size": rest[1],
                    "attn_decode": t,
                }
                for b, t in by_batch.items()
            ]
    return rows


# --------------------------------------------------------------------------------------------
# Reading Vidur's files


class VidurFiles:
    """Reads files of a Vidur clone, from a git directory at a commit or from a work tree."""

    def __init__(self, git_dir: str | None, ref: str, tree: str | None) -> None:
        self.git_dir, self.ref, self.tree = git_dir, ref, tree

    def read(self, path: str) -> str | None:
        """The file's text, or None when the clone lacks it (e.g. a blob left out of a clone)."""
        if self.tree is not None:
            p = Path(self.tree) / path
            return p.read_text() if p.is_file() else None
        cmd = ["git", "--git-dir", str(self.git_dir), "show", f"{self.ref}:{path}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or proc.stdout.startswith("version https://git-lfs"):
            return None
        return proc.stdout

    def csv(self, path: str) -> list[dict]:
        text = self.read(path)
        if text is None:
            raise SystemExit(f"cannot read {path} from the Vidur clone")
        return list(csv.DictReader(io.StringIO(text)))

    def resolve_commit(self) -> str:
        if self.tree is not None:
            out = subprocess.run(
                ["git", "-C", str(self.tree), "rev-parse", "HEAD"], capture_output=True, text=True
            )
            return out.stdout.strip() if out.returncode == 0 else self.ref
        out = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), "rev-parse", self.ref],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()


# --------------------------------------------------------------------------------------------
# Operator tables


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(intercept)


@dataclass
class Operator:
    """One token-wise operator: ms per layer as a function of the batch's token count.

    Inside the profiled range (1..4,096 tokens for mlp.csv) the medians are interpolated linearly
    (duplicate measurements averaged). Above it the time continues along a least-squares line
    fitted to the measurements in the top half of the range (tokens >= max/2), where these kernels
    are compute-bound and linear in tokens; the line is shifted to meet the last measured value.
    """

    x: np.ndarray
    y: np.ndarray

    @classmethod
    def from_points(cls, xs, ys) -> Operator:
        acc: dict[float, list[float]] = {}
        for x, y in zip(xs, ys, strict=True):
            acc.setdefault(float(x), []).append(float(y))
        x = np.array(sorted(acc))
        y = np.array([np.mean(acc[k]) for k in x])
        return cls(x, y)

    def __call__(self, n: float) -> float:
        if n <= self.x[-1]:
            return float(np.interp(n, self.x, self.y))
        top = self.x >= self.x[-1] / 2
        slope, _ = _line(self.x[top], self.y[top])
        return float(self.y[-1] + max(slope, 0.0) * (n - self.x[-1]))


@dataclass
class PrefillAttention:
    """Prefill attention (whole prompt, nothing cached) in ms per layer against the chunk size.

    Inside the profiled range the medians are interpolated linearly in chunk_size**2 (Vidur's own
    feature for this operator).  Above it (chunk > 4,096 tokens) the time follows a + b*c + q*c**2
    fitted to the measurements with c >= 1,024, shifted to meet the last measured value: causal
    attention work grows as c**2.
    """

    c: np.ndarray
    t: np.ndarray

    def __call__(self, c: float) -> float:
        if c <= 0:
            return 0.0
        if c <= self.c[-1]:
            return float(np.interp(c * c, self.c**2, self.t))
        big = self.c >= 1024
        q, b, a = np.polyfit(self.c[big], self.t[big], 2)

        def f(v):
            return a + b * v + q * v * v

        return float(self.t[-1] + f(c) - f(self.c[-1]))


@dataclass
class DecodeAttention:
    """Decode attention in ms per layer against (batch size B, mean KV length L).

    Vidur predicts this from (B, L) with a regression model trained on the attention table; here a
    smooth surrogate t = a0 + a1*B + a2*B*L (non-negative, fitted by relative least squares to the
    table rows) plays that role inside the range (B <= 128, L <= 4,096) and continues linearly in
    B and in B*L (the KV bytes read) beyond it. ``max_rel_error``: its worst error on the rows.
    """

    coef: np.ndarray
    max_rel_error: float
    median_rel_error: float

    @classmethod
    def fit(cls, b: np.ndarray, L: np.ndarray, t: np.ndarray) -> DecodeAttention:
        X = np.column_stack([np.ones_like(b), b, b * L])
        coef = nnls_enumerate(X / t[:, None], np.ones_like(t))
        rel = np.abs(X @ coef - t) / t
        return cls(coef, float(rel.max()), float(np.median(rel)))

    def __call__(self, b: float, L: float) -> float:
        if b <= 0:
            return 0.0
        return float(self.coef[0] + self.coef[1] * b + self.coef[2] * b * L)


# --------------------------------------------------------------------------------------------
# Vidur's batch time


@dataclass
class Setting:
    name: str
    model: str  # Vidur model name
    tp: int
    device: str
    network_device: str
    token_ops: dict[str, Operator]
    all_reduce: Operator | None  # ms against tokens
    prefill_attn: PrefillAttention
    decode_attn: DecodeAttention
    kv_save: Operator | None
    attention_note: str
    files: list[str]

    @property
    def cfg(self) -> dict:
        return MODELS[self.model]

    @property
    def gqa(self) -> bool:
        return self.cfg["num_q_heads"] > self.cfg["num_kv_heads"]


def vidur_round_seconds(s: Setting, prompts: list[int], decode_kv: list[int]) -> float:
    """Vidur's predicted time (s) of a batch: ``prompts`` prefilled whole, one decode step for each
    request whose KV length (processed tokens) is in ``decode_kv``.

    ``_get_*_execution_time`` of SklearnExecutionTimePredictor and ``ExecutionTime.model_time``.
    """
    n_tokens = sum(prompts) + len(decode_kv)
    n8 = (n_tokens + 7) // 8 * 8  # Batch._total_num_tokens_rounded
    ms = {op: s.token_ops[op](n8) for op in TOKEN_OPS}
    if not s.cfg["post_attn_norm"]:
        ms["post_attention_layernorm"] = 0.0
    # decode attention: (batch size, mean KV length rounded up to the prediction granularity)
    attn_decode = 0.0
    if decode_kv:
        g = KV_CACHE_PREDICTION_GRANULARITY
        mean_kv = (int(np.mean(decode_kv)) + g - 1) // g * g
        attn_decode = s.decode_attn(len(decode_kv), mean_kv)
        if s.gqa and len(decode_kv) > 1:
            attn_decode *= 1 + ATTENTION_BATCHING_OVERHEAD_FRACTION
    # prefill attention: kv_cache_size = 0 (whole prompts), chunk = sqrt(sum of squares)
    attn_prefill = 0.0
    if prompts:
        agg = round(math.sqrt(sum(p * p for p in prompts)))
        attn_prefill = s.prefill_attn(agg)
        if s.gqa and len(prompts) > 1:
            attn_prefill *= 1 + ATTENTION_BATCHING_OVERHEAD_FRACTION
    kv_save = s.kv_save(n_tokens) if s.kv_save is not None else 0.0  # exact token count
    tp_comm = 0.0
    if s.tp > 1:
        assert s.all_reduce is not None
        tp_comm = (
            s.all_reduce(n8)
            + NCCL_CPU_LAUNCH_OVERHEAD_MS
            + NCCL_CPU_SKEW_OVERHEAD_PER_DEVICE_MS * s.tp**1.25
        )
    attention_layer = (
        ms["attn_pre_proj"]
        + ms["attn_post_proj"]
        + ms["attn_rope"]
        + kv_save
        + attn_decode
        + attn_prefill
        + tp_comm
        + ms["input_layernorm"]
    )
    mlp_layer = (
        ms["mlp_up_proj"]
        + ms["mlp_down_proj"]
        + ms["mlp_act"]
        + tp_comm
        + ms["post_attention_layernorm"]
    )
    block = attention_layer + mlp_layer + ms["add"]
    return block * s.cfg["num_layers"] * 1e-3


# --------------------------------------------------------------------------------------------
# Building a setting from the files


def _f(row: dict, key: str) -> float | None:
    v = row.get(key, "")
    return float(v) if v not in ("", None) else None


def build_setting(
    files: VidurFiles,
    name: str,
    model: str,
    tp: int,
    device: str = "a100",
    network_device: str = "a100_pairwise_nvlink",
    proxy: tuple[int, int] | None = None,
) -> Setting:
    cfg = MODELS[model]
    mlp_path = f"data/profiling/compute/{device}/{model}/mlp.csv"
    used = [
        mlp_path,
        "vidur/config/model_config.py",
        "vidur/execution_time_predictor/sklearn_execution_time_predictor.py",
        "vidur/entities/execution_time.py",
    ]
    rows = [
        r
        for r in files.csv(mlp_path)
        if int(r["n_head"]) == cfg["num_q_heads"]
        and int(r["n_kv_head"]) == cfg["num_kv_heads"]
        and int(r["n_embd"]) == cfg["embedding_dim"]
        and int(r["n_expanded_embd"]) == cfg["mlp_hidden_dim"]
        and int(r["vocab_size"]) == cfg["vocab_size"]
        and r["use_gated_mlp"] == "True"
        and int(r["num_tensor_parallel_workers"]) == tp
    ]
    if not rows:
        raise SystemExit(f"{mlp_path}: no rows for tensor parallel {tp}")
    token_ops = {}
    for op in TOKEN_OPS:
        key = f"time_stats.{op}.median"
        pts = [(int(r["num_tokens"]), _f(r, key) or 0.0) for r in rows]
        token_ops[op] = Operator.from_points(*zip(*pts, strict=True))

    all_reduce = None
    if tp > 1:
        ar_path = f"data/profiling/network/{network_device}/all_reduce.csv"
        used.append(ar_path)
        ar = [
            r
            for r in files.csv(ar_path)
            if int(r["num_workers"]) == tp
            and int(r["devices_per_node"]) == tp
            and r["collective"] == "all_reduce"
        ]
        all_reduce = Operator.from_points(
            [int(r["size"]) / cfg["embedding_dim"] / 2 for r in ar],
            [float(r["time_stats.all_reduce.median"]) for r in ar],
        )

    attn_path = f"data/profiling/compute/{device}/{model}/attention.csv"
    text = files.read(attn_path)
    kv_save = None
    if text is not None:
        arows = [
            r
            for r in csv.DictReader(io.StringIO(text))
            if int(r["n_embd"]) == cfg["embedding_dim"]
            and int(r["n_q_head"]) == cfg["num_q_heads"]
            and int(r["n_kv_head"]) == cfg["num_kv_heads"]
            and int(r["block_size"]) == BLOCK_SIZE
            and int(r["num_tensor_parallel_workers"]) == tp
        ]
        prefill = [
            r for r in arows if int(r["prefill_chunk_size"]) > 0 and int(r["kv_cache_size"]) == 0
        ]
        decode = [r for r in arows if int(r["prefill_chunk_size"]) == 0]
        pre = {
            int(r["prefill_chunk_size"]): float(r["time_stats.attn_prefill.median"])
            for r in prefill
        }
        dec = [
            (
                int(r["batch_size"]),
                int(r["kv_cache_size"]),
                float(r["time_stats.attn_decode.median"]),
            )
            for r in decode
        ]
        if "time_stats.attn_kv_cache_save.median" in (arows[0] if arows else {}):
            kv_save = Operator.from_points(
                [max(int(r["prefill_chunk_size"]), int(r["batch_size"])) for r in arows],
                [_f(r, "time_stats.attn_kv_cache_save.median") or 0.0 for r in arows],
            )
        used.append(attn_path)
        note = f"{attn_path} (rows with {tp} worker(s))"
    else:
        if proxy is None:
            raise SystemExit(
                f"{attn_path} is missing from the clone and no proxy is set for {name}"
            )
        pw, dw = proxy
        ex = attention_extract_rows(pw, dw)
        pre = {r["prefill_chunk_size"]: r["attn_prefill"] for r in ex if "attn_prefill" in r}
        dec = [
            (r["batch_size"], r["kv_cache_size"], r["attn_decode"])
            for r in ex
            if "attn_decode" in r
        ]
        used.append(
            f"{ATTENTION_PROXY_SOURCE['path']} (read from the copy "
            f"{ATTENTION_PROXY_SOURCE['copy']}; {len(ex)} rows transcribed: prefill from "
            f"{pw}-worker rows, decode from {dw}-worker rows)"
        )
        if attn_path == ATTENTION_PROXY_SOURCE["path"]:
            note = (
                f"{attn_path} is not in the clone; its rows transcribed in ATTENTION_EXTRACT "
                f"(prefill and decode: {dw} worker(s)) are used"
            )
        else:
            note = (
                f"{attn_path} is not in the clone; proxy rows of {ATTENTION_PROXY_SOURCE['path']} "
                f"matched by per-GPU heads (prefill: {pw} worker(s), decode: {dw} worker(s))"
            )
    c = np.array(sorted(pre))
    prefill_attn = PrefillAttention(c, np.array([pre[k] for k in c]))
    b, L, t = (np.array(v, dtype=float) for v in zip(*dec, strict=True))
    decode_attn = DecodeAttention.fit(b, L, t)
    return Setting(
        name,
        model,
        tp,
        device,
        network_device,
        token_ops,
        all_reduce,
        prefill_attn,
        decode_attn,
        kv_save,
        note,
        used,
    )


# --------------------------------------------------------------------------------------------
# Grid, fit, errors

DECODERS = [0, 1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256]
SINGLE_PROMPTS = [10, 32, 100, 250, 500, 1000, 2000, 3000, 4000, 6000, 8000]
MULTI_PROMPTS = [
    (2, 100),
    (4, 100),
    (8, 100),
    (16, 100),
    (32, 50),
    (2, 500),
    (4, 500),
    (8, 500),
    (2, 1000),
    (4, 1000),
    (2, 2000),
    (3, 2000),
    (2, 4000),
]
KV_FRACTIONS = [0.05, 0.25, 0.5, 0.75, 1.0]
MIN_CONTEXT = 11  # a decoding request holds at least s_i + 1 tokens; lpsched prompts are >= 10


@dataclass
class Point:
    memory: int
    prompts: tuple[int, ...]
    decoders: int
    decode_kv: int  # KV held by the decoding requests (lpsched's count, this round's token in)
    P: int
    D: int
    K: int
    seconds: float


def grid(s: Setting, memories: list[int]) -> list[Point]:
    """Batch compositions: k whole prompts started plus ``decoders`` requests in decode, whose KV
    (``decode_kv``) fills a fraction of what the memory M leaves after the new prompts.

    lpsched's counts for the round: P = sum of prompts, D = decoders + k (every running request
    emits one token), K = decode_kv + sum(p + 1) (a request holds s_i + j tokens in its j-th round).
    Vidur's view: k prefills of p tokens (nothing cached) and ``decoders`` decodes whose processed
    tokens average (decode_kv - decoders) / decoders.
    """
    prompt_sets: list[tuple[int, ...]] = [()]
    prompt_sets += [(p,) for p in SINGLE_PROMPTS]
    prompt_sets += [(p,) * k for k, p in MULTI_PROMPTS]
    pts: dict[tuple, Point] = {}
    for M, prompts, nd in itertools.product(memories, prompt_sets, DECODERS):
        held_new = sum(p + 1 for p in prompts)
        room = M - held_new
        if room < nd * MIN_CONTEXT or (nd == 0 and not prompts):
            continue
        fracs = [0.0] if nd == 0 else KV_FRACTIONS
        for f in fracs:
            kv = max(nd * MIN_CONTEXT, int(f * room)) if nd else 0
            # one request's context stays below M (s_i + o_i <= M)
            if nd and kv / nd > M:
                continue
            key = (M, prompts, nd, kv)
            if key in pts:
                continue
            per = [] if nd == 0 else _spread(kv - nd, nd)
            sec = vidur_round_seconds(s, list(prompts), per)
            pts[key] = Point(
                M, prompts, nd, kv, sum(prompts), nd + len(prompts), kv + held_new, sec
            )
    return list(pts.values())


def _spread(total: int, n: int) -> list[int]:
    """n KV lengths summing to total (as equal as integers allow); Vidur uses only their mean."""
    q, r = divmod(total, n)
    return [q + 1] * r + [q] * (n - r)


COEFS = ["base_s", "prefill_token_s", "prefill_token2_s", "decode_request_s", "kv_token_s"]


def design(points: list[Point]) -> np.ndarray:
    P = np.array([p.P for p in points], dtype=float)
    D = np.array([p.D for p in points], dtype=float)
    K = np.array([p.K for p in points], dtype=float)
    return np.column_stack([np.ones_like(P), P, P * P, D, K])


def nnls_enumerate(A: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Exact non-negative least squares for a handful of columns: the best unconstrained solution
    over every support set whose solution is non-negative (2**k small problems, k <= 6 here)."""
    k = A.shape[1]
    scale = np.linalg.norm(A, axis=0)
    scale[scale == 0] = 1.0
    As = A / scale
    best, best_r = np.zeros(k), float(np.sum(y**2))
    for m in range(1, 2**k):
        cols = [j for j in range(k) if m >> j & 1]
        sol, *_ = np.linalg.lstsq(As[:, cols], y, rcond=None)
        if np.any(sol < 0):
            continue
        r = float(np.sum((As[:, cols] @ sol - y) ** 2))
        if r < best_r - 1e-15:
            best_r, best = r, np.zeros(k)
            best[cols] = sol
    return best / scale


def fit(points: list[Point]) -> np.ndarray:
    """Relative-error NNLS with the decode-only and the prefill rounds weighted half each.

    Minimises sum g_i * ((pred_i - d_i) / d_i)**2 with coefficients >= 0, where g_i = 1 / (2 n_g)
    for the n_g points of point i's group (P = 0 or P > 0).  Relative errors, because durations span
    two orders of magnitude (a decode round is tens of ms, an 8,000-token prefill seconds) and an
    absolute fit would give the short rounds no say; group weights, because the grid has many more
    prefill compositions than decode-only ones while in an lpsched schedule most rounds are
    decode-only (a request prefills in one round and decodes in o_i).
    """
    X = design(points)
    d = np.array([p.seconds for p in points])
    dec = np.array([p.P == 0 for p in points])
    g = np.where(dec, 0.5 / max(dec.sum(), 1), 0.5 / max((~dec).sum(), 1))
    w = np.sqrt(g) / d
    return nnls_enumerate(X * w[:, None], w * d)


def errors(points: list[Point], coef: np.ndarray) -> dict:
    d = np.array([p.seconds for p in points])
    pred = design(points) @ coef
    rel = np.abs(pred - d) / d
    worst = int(np.argmax(rel))
    return {
        "points": len(points),
        "rmse_s": float(np.sqrt(np.mean((pred - d) ** 2))),
        "median_rel_error": float(np.median(rel)),
        "p90_rel_error": float(np.quantile(rel, 0.9)),
        "max_rel_error": float(rel.max()),
        "worst": points[worst],
        "worst_pred": float(pred[worst]),
    }


def linear_seconds(coef: np.ndarray, P: int, D: int, K: int) -> float:
    return float(coef @ np.array([1.0, P, P * P, D, K]))


# --------------------------------------------------------------------------------------------
# Validation on real lpsched schedules


def schedule_rounds(instance, schedule) -> list[tuple[list[int], int, int, int]]:
    """Per round t = 1..makespan of an lpsched schedule: (prompts started, decoders, sum of the
    decoders' processed KV tokens (Vidur's count), K held (lpsched's m(t)))."""
    s = np.asarray(instance.prefill, dtype=np.int64)
    o = np.asarray(instance.decode, dtype=np.int64)
    p = np.asarray(schedule.start, dtype=np.int64)
    T = int((p + o).max())
    cnt = np.zeros(T + 3, dtype=np.int64)  # decoders: rounds p+2 .. p+o
    acc = np.zeros(T + 3, dtype=np.int64)  # sum of (s - p - 1) over them; kv(t) = s + t - p - 1
    lo, hi = p + 2, p + o
    live = hi >= lo
    np.add.at(cnt, lo[live], 1)
    np.add.at(cnt, hi[live] + 1, -1)
    np.add.at(acc, lo[live], (s - p - 1)[live])
    np.add.at(acc, hi[live] + 1, -(s - p - 1)[live])
    cnt, acc = np.cumsum(cnt), np.cumsum(acc)
    first: dict[int, list[int]] = {}
    for i in np.argsort(p, kind="stable"):
        first.setdefault(int(p[i]) + 1, []).append(int(s[i]))
    out = []
    for t in range(1, T + 1):
        prompts = first.get(t, [])
        nd = int(cnt[t])
        kv = int(acc[t] + t * cnt[t])
        K = kv + nd + sum(x + 1 for x in prompts)
        out.append((prompts, nd, kv, K))
    return out


def validate(s: Setting, coef: np.ndarray, policies=("fcfs", "mcsf", "sorted-f")) -> None:
    """Compare Vidur-style and fitted durations round by round on the shipped default instance."""
    try:
        import lpsched
    except ImportError:
        print("(lpsched not importable: schedule check skipped)")
        return
    inst = lpsched.default_instance()
    print(f"\nschedules of the default instance (n = {inst.n}, M = {inst.memory}):")
    print(
        "| policy | rounds | Vidur-style total (s) | linear total (s) | total error | "
        "median round error | 90th pct | max round error |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for pol in policies:
        sched = lpsched.run_policy(inst, pol)
        v, lin = [], []
        for prompts, nd, kv, K in schedule_rounds(inst, sched):
            if not prompts and nd == 0:
                continue
            v.append(vidur_round_seconds(s, prompts, _spread(kv, nd) if nd else []))
            lin.append(linear_seconds(coef, sum(prompts), nd + len(prompts), K))
        v, lin = np.array(v), np.array(lin)
        rel = np.abs(lin - v) / v
        print(
            f"| {pol} | {len(v)} | {v.sum():.1f} | {lin.sum():.1f} | "
            f"{(lin.sum() - v.sum()) / v.sum():+.1%} | {np.median(rel):.1%} | "
            f"{np.quantile(rel, 0.9):.1%} | {rel.max():.1%} |"
        )


# --------------------------------------------------------------------------------------------
# Main

PROFILES = [
    {
        "name": "llama2-70b-a100x2",
        "model_label": "Llama-2-70B",
        "gpu": "2 x A100 80GB, tensor parallel 2",
        "vidur_model": "meta-llama/Llama-2-70b-hf",
        "tp": 2,
        "proxy": (1, 8),
        "memories": [16492, 32768, 65536, 100000],
    },
    {
        "name": "llama2-7b-a100x1",
        "model_label": "Llama-2-7B",
        "gpu": "1 x A100 80GB",
        "vidur_model": "meta-llama/Llama-2-7b-hf",
        "tp": 1,
        "proxy": (1, 1),
        "memories": [16492, 32768, 65536, 100000],
    },
]


def describe(pt: Point) -> str:
    pr = (
        "none"
        if not pt.prompts
        else (f"{len(pt.prompts)} x {pt.prompts[0]}" if len(pt.prompts) > 1 else str(pt.prompts[0]))
    )
    return f"M={pt.memory}, prompts {pr}, {pt.decoders} decoders (P={pt.P}, D={pt.D}, K={pt.K})"


def method_text(s: Setting, n: int) -> str:
    """The one-paragraph method of a profile (``source.method`` in the JSON)."""
    tp = ""
    if s.tp > 1:
        tp = (
            f"two all-reduces per layer from network/{s.network_device}/all_reduce.csv "
            f"({s.tp} workers) plus Vidur's 0.02 ms NCCL launch overhead, "
        )
    gqa = ", each x1.1 when batching more than one request (GQA)" if s.gqa else ""
    return (
        "Vidur's batch time rebuilt from its profiling tables: per layer, the token-wise "
        f"operators of compute/{s.device}/{s.model}/mlp.csv ({s.tp} tensor-parallel worker(s); "
        "QKV/output projections, MLP up/down/activation, two RMS norms, rotary, residual add) "
        f"at the batch's token count rounded up to 8, {tp}decode attention at (decode batch, "
        "mean KV length rounded up to 64) and prefill attention at sqrt(sum of squared prompt "
        f"lengths) with no cached KV{gqa}, times {s.cfg['num_layers']} layers; no embedding, "
        f"LM head or CPU overhead (Vidur's defaults). Attention: {s.attention_note}. Tables "
        "interpolated inside their range (1-4,096 tokens for mlp.csv; chunk <= 4,096, batch <= "
        "128 and KV <= 4,096 for attention); beyond it the token-wise operators continue "
        "linearly, prefill attention quadratically, decode attention linearly in batch and in "
        "batch x KV. Fitted by exact non-negative least squares on relative errors over "
        f"{n} grid points, the decode-only and the prefill rounds weighted half each (most "
        "rounds of an lpsched schedule are decode-only)."
    )


def range_text(memories: list[int]) -> str:
    """The grid of a profile (``fit.range`` in the JSON)."""
    mem = ", ".join(f"{m:,}" for m in memories)
    return (
        f"KV cache M in {{{mem}}} tokens; rounds with no prompt, one prompt of "
        f"{SINGLE_PROMPTS[0]}-{SINGLE_PROMPTS[-1]:,} tokens, or 2-32 equal prompts "
        f"(P <= 8,000); 0-{DECODERS[-1]} requests in decode holding "
        f"{int(KV_FRACTIONS[0] * 100)}-100% of the KV cache the prompts leave (at least "
        f"{MIN_CONTEXT} tokens each); D counts every running request, K every KV token held"
    )


def run(args: argparse.Namespace) -> int:
    files = VidurFiles(args.vidur_git_dir, args.ref, args.vidur_dir)
    commit = files.resolve_commit()
    if commit != VIDUR_COMMIT:
        print(f"warning: fitting from {commit}, not the pinned {VIDUR_COMMIT}", file=sys.stderr)
    out_profiles = []
    for spec in PROFILES:
        s = build_setting(files, spec["name"], spec["vidur_model"], spec["tp"], proxy=spec["proxy"])
        pts = grid(s, spec["memories"])
        coef = fit(pts)
        err = errors(pts, coef)
        subsets = {
            "all": pts,
            "decode only (P = 0)": [p for p in pts if p.P == 0],
            "with prefill (P > 0)": [p for p in pts if p.P > 0],
            "one prompt": [p for p in pts if len(p.prompts) == 1],
            "several prompts": [p for p in pts if len(p.prompts) > 1],
            "M = 16,492": [p for p in pts if p.memory == 16492],
            "M > 16,492": [p for p in pts if p.memory > 16492],
        }
        print(f"\n## {spec['name']} ({spec['gpu']})")
        print(f"attention: {s.attention_note}")
        da = s.decode_attn
        print(
            f"decode-attention surrogate ms = {da.coef[0]:.4g} + {da.coef[1]:.4g}*B + "
            f"{da.coef[2]:.4g}*B*L  (median / max rel. error on its rows: "
            f"{da.median_rel_error:.3f} / {da.max_rel_error:.3f})"
        )
        print(
            "coefficients: " + ", ".join(f"{k} = {v:.6g}" for k, v in zip(COEFS, coef, strict=True))
        )
        print("\n| points | n | RMSE (ms) | median rel. error | 90th pct | max rel. error |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, sub in subsets.items():
            if not sub:
                continue
            e = errors(sub, coef)
            print(
                f"| {label} | {e['points']} | {e['rmse_s'] * 1e3:.1f} | "
                f"{e['median_rel_error']:.1%} | {e['p90_rel_error']:.1%} | "
                f"{e['max_rel_error']:.1%} |"
            )
        w = err["worst"]
        print(
            f"\nworst point: {describe(w)}: Vidur {w.seconds * 1e3:.1f} ms, linear "
            f"{err['worst_pred'] * 1e3:.1f} ms"
        )
        worst5 = sorted(
            pts, key=lambda p: -abs(linear_seconds(coef, p.P, p.D, p.K) - p.seconds) / p.seconds
        )[:8]
        print("largest relative errors:")
        for p in worst5:
            lin = linear_seconds(coef, p.P, p.D, p.K)
            print(
                f"  {describe(p)}: Vidur {p.seconds * 1e3:.1f} ms, linear {lin * 1e3:.1f} ms "
                f"({(lin - p.seconds) / p.seconds:+.1%})"
            )
        print("\nsanity checks (ms):")
        checks = [
            (
                "decode-only round, 64 requests, 16,384 KV tokens",
                [],
                [16384 // 64 - 1] * 64,
                0,
                64,
                16384,
            ),
            ("decode-only round, 1 request, 1,000 KV tokens", [], [999], 0, 1, 1000),
            (
                "decode-only round, 256 requests, 16,384 KV tokens",
                [],
                [16384 // 256 - 1] * 256,
                0,
                256,
                16384,
            ),
            ("prefill one 8,000-token prompt, nothing else", [8000], [], 8000, 1, 8001),
            (
                "prefill one 2,000-token prompt + 32 decoders holding 8,000 KV",
                [2000],
                [8000 // 32 - 1] * 32,
                2000,
                33,
                10001,
            ),
            ("prefill one 1,024-token prompt, nothing else", [1024], [], 1024, 1, 1025),
        ]
        for label, prompts, kvs, P, D, K in checks:
            v = vidur_round_seconds(s, prompts, kvs)
            lin = linear_seconds(coef, P, D, K)
            print(f"  {label}: Vidur-style {v * 1e3:.1f}, linear {lin * 1e3:.1f}")
        n8 = 8000
        parts = {op: s.token_ops[op](n8) for op in TOKEN_OPS}
        print(
            f"  8,000-token prefill per layer: token-wise ops {sum(parts.values()):.3f} ms "
            f"(extrapolated above 4,096), prefill attention {s.prefill_attn(8000):.3f} ms, "
            f"all-reduce {s.all_reduce(n8) if s.all_reduce else 0.0:.3f} ms x2"
        )
        parts64 = {op: s.token_ops[op](64) for op in TOKEN_OPS}
        print(
            f"  64-token decode per layer: token-wise ops {sum(parts64.values()):.3f} ms, "
            f"decode attention {s.decode_attn(64, 256) * (1.1 if s.gqa else 1):.3f} ms, "
            f"all-reduce {s.all_reduce(64) if s.all_reduce else 0.0:.3f} ms x2"
        )
        validate(s, coef)
        out_profiles.append(
            {
                "name": spec["name"],
                "model": spec["model_label"],
                "gpu": spec["gpu"],
                "form": "linear",
                "coefficients": {k: float(f"{v:.6g}") for k, v in zip(COEFS, coef, strict=True)},
                "source": {
                    "repository": VIDUR_REPOSITORY,
                    "commit": commit,
                    "files": s.files,
                    "method": method_text(s, len(pts)),
                },
                "fit": {
                    "points": err["points"],
                    "rmse_s": float(f"{err['rmse_s']:.4g}"),
                    "median_rel_error": float(f"{err['median_rel_error']:.4g}"),
                    "max_rel_error": float(f"{err['max_rel_error']:.4g}"),
                    "range": range_text(spec["memories"]),
                },
            }
        )
    payload = {"profiles": out_profiles}
    text = json.dumps(payload, indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text)
        print(f"\nwrote {args.output}")
    else:
        print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--vidur-git-dir", help="git directory of a microsoft/vidur clone (bare or .git)"
    )
    src.add_argument(
        "--vidur-dir", help="work tree of a microsoft/vidur checkout at the pinned commit"
    )
    ap.add_argument(
        "--ref",
        default=VIDUR_COMMIT,
        help="commit to read with --vidur-git-dir (default: the pinned %(default)s)",
    )
    ap.add_argument("-o", "--output", help="write the profiles JSON here (default: print it)")
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())

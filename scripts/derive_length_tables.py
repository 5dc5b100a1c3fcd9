"""Derive the empirical length tables shipped in lpsched/data/length_tables.json.

Reads the public traces (never copied into the project) and writes, per workload, the
quantiles of the prefill length at 1,001 levels (0, 0.001, ..., 1) and, for each of 50 bins of
prefill rank (2% of the rows each), the quantiles of the decode length at 101 levels (the
``inverted_cdf`` method, so every value is a length seen in the trace). The conditional tables
keep the dependence of decode on prefill, e.g. the arXiv trace's cap prefill + decode <= 4,096.

    python scripts/derive_length_tables.py ../shared/traces
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from lpsched.io import read_trace_csv

SOURCES = {
    "conversation": (
        "splitwise_conv.csv",
        "Azure LLM inference trace 2023, conversation service (Patel et al., Splitwise, ISCA 2024; "
        "processed by microsoft/vidur)",
    ),
    "sharegpt": (
        "sharegpt_8k_filtered_stats_llama2_tokenizer.csv",
        "ShareGPT conversations, Llama-2 tokenizer, context <= 8k (project-etalon/etalon)",
    ),
    "summarization": (
        "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv",
        "arXiv summarization (Cohan et al. 2018), Llama-2 tokenizer, <= 4k tokens "
        "(microsoft/vidur)",
    ),
    "code": (
        "splitwise_code.csv",
        "Azure LLM inference trace 2023, code-completion service (Splitwise; microsoft/vidur)",
    ),
    "translation": (
        "bwb_stats_llama2_tokenizer_filtered_v2.csv",
        "Bilingual web-book translation, Llama-2 tokenizer (project-etalon/etalon)",
    ),
}
LEVELS = np.linspace(0.0, 1.0, 1001)
BINS = 50
COND_LEVELS = np.linspace(0.0, 1.0, 101)


def conditional_decode(s: np.ndarray, o: np.ndarray) -> list[list[int]]:
    """Decode quantiles within each bin of prefill rank (ties in prefill broken by row)."""
    rank = np.argsort(s, kind="stable")
    edges = np.linspace(0, s.size, BINS + 1).round().astype(int)
    return [
        np.quantile(o[rank[a:b]], COND_LEVELS, method="inverted_cdf").astype(int).tolist()
        for a, b in zip(edges[:-1], edges[1:], strict=True)
    ]


def main(trace_dir: str) -> None:
    tables = {}
    for name, (fname, source) in SOURCES.items():
        s, o, _ = read_trace_csv(Path(trace_dir) / fname)
        tables[name] = {
            "source": source,
            "file": fname,
            "rows": int(s.size),
            "prefill": np.quantile(s, LEVELS, method="inverted_cdf").astype(int).tolist(),
            "decode_given_prefill": conditional_decode(s, o),
            "prefill_mean": round(float(s.mean()), 1),
            "decode_mean": round(float(o.mean()), 1),
        }
    out = Path(__file__).resolve().parents[1] / "lpsched" / "data" / "length_tables.json"
    doc = {
        "prefill_levels": LEVELS.size,
        "prefill_bins": BINS,
        "decode_levels": COND_LEVELS.size,
        "method": "numpy.quantile(method='inverted_cdf')",
        "tables": tables,
    }
    out.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/traces")

"""Workload generators: shipped tables, mixtures, arrivals, trace sampling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from reference.traces import TRACE_DIR, needs_traces

from lpsched.generators.arrivals import poisson_arrivals
from lpsched.generators.workloads import (
    WORKLOADS,
    from_traces,
    generate,
    length_table,
    parse_mixture,
)
from lpsched.instance import InstanceError

TRACES = TRACE_DIR if TRACE_DIR is not None else Path("no-traces")


def test_tables_are_monotone_quantiles_with_sources():
    for name in ("conversation", "sharegpt", "summarization", "code", "translation"):
        t = length_table(name)
        assert t.prefill.size == 1001 and t.decode_given_prefill.shape == (50, 101)
        assert np.all(np.diff(t.prefill) >= 0)
        assert np.all(np.diff(t.decode_given_prefill, axis=1) >= 0)
        assert t.decode_given_prefill.min() >= 1 and t.prefill[0] >= 0
        assert t.source and t.rows > 1000


def test_table_medians_match_the_trace_summaries():
    # the traces' summaries: arXiv prefill median 2,730, decode median 167; Azure conversation
    # prefill median 1,020, decode 129; Azure code decode median 13.
    assert length_table("summarization").prefill[500] == 2730
    assert length_table("conversation").prefill[500] == 1020
    rng = np.random.default_rng(0)
    for name, median in (("summarization", 167), ("conversation", 129), ("code", 13)):
        _, o = length_table(name).sample(40000, rng)
        assert abs(np.median(o) / median - 1) < 0.05, name


def test_summarization_keeps_the_trace_cap_on_total_length():
    # the arXiv trace is filtered to prefill + decode <= 4,096; the conditional tables keep it
    # up to the width of a prefill bin
    s, o = length_table("summarization").sample(50000, np.random.default_rng(1))
    assert np.quantile(s + o, 0.999) <= 4096 + 100


def test_generate_is_reproducible_and_follows_the_table():
    a = generate("conversation", 20000, 16492, seed=3)
    b = generate("conversation", 20000, 16492, seed=3)
    c = generate("conversation", 20000, 16492, seed=4)
    assert np.array_equal(a.prefill, b.prefill) and np.array_equal(a.decode, b.decode)
    assert not np.array_equal(a.prefill, c.prefill)
    # sample medians within 3% of the trace medians (20,000 draws)
    assert abs(np.median(a.prefill) / 1020 - 1) < 0.03
    assert abs(np.median(a.decode) / 129 - 1) < 0.03
    assert a.offline and a.metadata["seed"] == 3


def test_mixture_shares_and_parse():
    assert parse_mixture("mix-80-20") == {"conversation": 0.8, "summarization": 0.2}
    w = parse_mixture("code:1,translation:3")
    assert w == {"code": 0.25, "translation": 0.75}
    inst = generate("summarization:0.5,code:0.5", 4000, 16492, seed=0)
    # code decodes are short (median 13), arXiv ones long (median 167): about half below 60
    share_short = np.mean(inst.decode < 60)
    assert 0.4 < share_short < 0.6
    for bad in ("nosuch", "code:-1", "code:x", ""):
        with pytest.raises(ValueError):
            parse_mixture(bad)
    assert "mix-80-20" in WORKLOADS


def test_generate_refuses_requests_larger_than_memory():
    with pytest.raises(InstanceError, match="larger memory"):
        generate("summarization", 50, 1000, seed=0)


def test_poisson_arrivals_rate():
    rng = np.random.default_rng(0)
    a = poisson_arrivals(10000, 0.5, rng)
    assert np.all(np.diff(a) >= 0)
    assert abs(a[-1] / 10000 - 2.0) < 0.1  # mean gap 1 / rate = 2 rounds
    with pytest.raises(ValueError):
        poisson_arrivals(3, 0.0, rng)
    inst = generate("code", 100, 16492, seed=1, arrival_rate=0.1)
    assert not inst.offline


def test_from_traces_draws_real_rows(tmp_path):
    f1 = tmp_path / "a.csv"
    f1.write_text("num_prefill_tokens,num_decode_tokens,x\n" + "10,5,0\n20,6,0\n30,7,0\n" * 3)
    f2 = tmp_path / "b.csv"
    f2.write_text("arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,100,50\n\n1.0,101,50\n")
    inst = from_traces([f1, f2], 10, 200, weights=[0.8, 0.2], seed=0)
    assert inst.n == 10
    pairs = set(zip(inst.prefill.tolist(), inst.decode.tolist(), strict=True))
    assert pairs <= {(10, 5), (20, 6), (30, 7), (100, 50), (101, 50)}
    assert int(np.sum(inst.prefill >= 100)) == 2  # 20% of 10 from the second file
    files = [row[0] for row in inst.metadata["rows"]]
    assert [f == "b.csv" for f in files] == (inst.prefill >= 100).tolist()
    # the blank line 3 is skipped: the second row of b.csv is on line 4
    with pytest.raises(InstanceError, match=r"b\.csv: line 4"):
        from_traces([f2], 2, 150, seed=0)
    with pytest.raises(InstanceError, match="fewer than the 3 requests"):
        from_traces([f2], 3, 200, seed=0)


@needs_traces
def test_real_traces_mix():
    inst = from_traces(
        [
            TRACES / "splitwise_conv.csv",
            TRACES / "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv",
        ],
        2000,
        16492,
        weights=[0.8, 0.2],
        seed=0,
    )
    assert inst.n == 2000 and inst.metadata["counts"] == [1600, 400]


@pytest.mark.parametrize("spec", ["code:1,code:1", "code,code", "code:0.5,sharegpt:0.5,code:0.2"])
def test_mixture_with_a_repeated_name_is_refused(spec):
    # "code:1,code:1" used to be accepted (the weights summed)
    with pytest.raises(ValueError, match="component 'code' appears twice"):
        parse_mixture(spec)
    with pytest.raises(ValueError, match="appears twice"):
        generate(spec, 5, 20000)


@pytest.mark.parametrize("workload", ["paper-mix", "jaillet-synthetic", "scaled-mix"])
def test_too_many_requests_are_refused_before_drawing(workload, tmp_path):
    """``generate --workload jaillet-synthetic -n 1000000000`` drew until memory ran out; now
    every generator refuses n above MAX_REQUESTS at once, naming the limit."""
    from click.testing import CliRunner

    from lpsched.cli import main
    from lpsched.generators.workloads import MAX_REQUESTS

    result = CliRunner().invoke(
        main,
        [
            "generate",
            "--workload",
            workload,
            "-n",
            str(MAX_REQUESTS + 1),
            "--memory",
            "60000",
            "-o",
            str(tmp_path / "x.json"),
        ],
    )
    assert result.exit_code != 0 and f"{MAX_REQUESTS:,}" in result.output
    assert not (tmp_path / "x.json").exists()

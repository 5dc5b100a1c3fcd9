"""The trace registry (``lpsched.datasets``) and ``lpsched traces``: the registered hashes are
those of the public files, a fetch checks them, and the reproductions read the cache by default
and say what they skipped without it.

The downloads come from a folder of the traces (``reference.traces.TRACE_DIR``: the fetched
cache, or ``shared/traces`` beside the clone) served on ``http://127.0.0.1``, or read as a
``file://`` folder (pooch fetches over HTTP, FTP, SFTP and DOI; lpsched copies ``file://``);
``LPSCHED_TRACES_URL`` points the registry at it and ``LPSCHED_DATA_DIR`` at a temporary cache.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from reference.traces import SKIP_REASON, TRACE_DIR, needs_traces

from lpsched import datasets
from lpsched.cli import main
from lpsched.generators.workloads import length_table
from lpsched.research.reproductions import headline, online_load

SHARED = TRACE_DIR if TRACE_DIR is not None else Path("no-traces")
TIMING = {"runtime_s"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """An HTTP server on 127.0.0.1 serving ``good/`` (copies of the shared traces) and
    ``bad/`` (the conversation trace with one digit changed); yields (base URL, request log)."""
    if TRACE_DIR is None:
        pytest.skip(SKIP_REASON)
    root = tmp_path_factory.mktemp("served")
    shutil.copytree(SHARED, root / "good")
    (root / "bad").mkdir()
    text = (SHARED / "splitwise_conv.csv").read_text()
    (root / "bad" / "splitwise_conv.csv").write_text(text.replace("374,44", "374,45", 1))
    log: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, fmt, *args):
            log.append(self.path)

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", log
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty trace cache, and no proxy between the test and 127.0.0.1."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(folder))
    monkeypatch.delenv(datasets.TRACES_URL_ENV, raising=False)
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return folder


# ------------------------------------------------------------------ the registry


@needs_traces
@pytest.mark.parametrize("name", sorted(datasets.TRACES))
def test_registry_describes_the_public_files(name):
    trace = datasets.TRACES[name]
    path = SHARED / trace.file
    assert hashlib.sha256(path.read_bytes()).hexdigest() == trace.sha256
    with path.open() as fh:
        assert sum(1 for _ in fh) - 1 == trace.rows
    assert trace.repository in length_table(name).source  # the workload names its source


def test_urls_are_pinned_raw_files():
    expected = {
        "conversation": "microsoft/vidur/7d47513363ec447a741ac5e47241580b47724fbf",
        "summarization": "microsoft/vidur/7d47513363ec447a741ac5e47241580b47724fbf",
        "code": "microsoft/vidur/7d47513363ec447a741ac5e47241580b47724fbf",
        "sharegpt": "project-etalon/etalon/d5f18de15a2227a2d469365afc4fa9e2df0c631d",
        "translation": "project-etalon/etalon/d5f18de15a2227a2d469365afc4fa9e2df0c631d",
    }
    licences = {"microsoft/vidur": "MIT", "project-etalon/etalon": "Apache-2.0"}
    for name, trace in datasets.TRACES.items():
        assert trace.url == (
            f"https://raw.githubusercontent.com/{expected[name]}/data/processed_traces/{trace.file}"
        )
        assert trace.licence == licences[trace.repository]
        assert re.fullmatch(r"[0-9a-f]{64}", trace.sha256)


def test_cache_dir_and_url_overrides(monkeypatch, tmp_path):
    monkeypatch.setenv(datasets.DATA_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(datasets.TRACES_URL_ENV, "http://mirror.example/traces/")
    assert datasets.cache_dir() == tmp_path
    assert datasets.trace_url("code") == "http://mirror.example/traces/splitwise_code.csv"
    monkeypatch.delenv(datasets.DATA_DIR_ENV)
    monkeypatch.delenv(datasets.TRACES_URL_ENV)
    assert datasets.cache_dir().parts[-2:] == ("lpsched", "traces")
    assert datasets.trace_url("code") == datasets.TRACES["code"].url
    with pytest.raises(KeyError, match="unknown trace 'nosuch'; known: conversation, "):
        datasets.trace_url("nosuch")


# ------------------------------------------------------------------ fetch


def test_fetch_downloads_checks_and_keeps(server, cache, monkeypatch):
    base, log = server
    monkeypatch.setenv(datasets.TRACES_URL_ENV, base + "/good")
    assert not datasets.is_cached("conversation")
    got = datasets.fetch(["conversation", "code"])
    assert got == {
        "conversation": cache / "splitwise_conv.csv",
        "code": cache / "splitwise_code.csv",
    }
    assert (cache / "splitwise_code.csv").read_bytes() == (
        SHARED / "splitwise_code.csv"
    ).read_bytes()
    assert datasets.is_cached("conversation") and not datasets.is_cached("sharegpt")
    umask = os.umask(0o022)
    os.umask(umask)
    assert (cache / "splitwise_conv.csv").stat().st_mode & 0o777 == 0o666 & ~umask
    before = len(log)
    datasets.fetch(["conversation"])  # already there with the right hash: no request
    assert len(log) == before
    (cache / "splitwise_code.csv").write_text("num_prefill_tokens,num_decode_tokens\n1,1\n")
    assert not datasets.is_cached("code")
    datasets.fetch(["code"])  # a damaged copy is downloaded again
    assert datasets.is_cached("code") and log[before:] == ["/good/splitwise_code.csv"]


def test_fetch_refuses_a_wrong_hash_and_a_missing_file(server, cache, monkeypatch):
    base, _ = server
    monkeypatch.setenv(datasets.TRACES_URL_ENV, base + "/bad")
    with pytest.raises(datasets.TraceDownloadError) as err:
        datasets.fetch(["conversation"])
    msg = str(err.value)
    assert msg.startswith(
        f"trace 'conversation' (splitwise_conv.csv) from {base}/bad/splitwise_conv.csv"
    )
    assert f"expected sha256:{datasets.TRACES['conversation'].sha256}" in msg
    assert not (cache / "splitwise_conv.csv").exists()  # the bad download is deleted
    with pytest.raises(datasets.TraceDownloadError, match=r"trace 'code' .*404"):
        datasets.fetch(["code"])  # bad/ has no splitwise_code.csv


@needs_traces
def test_a_file_url_mirror_is_copied_and_checked(cache, tmp_path, monkeypatch):
    """Issue 22, item 13: a ``file://`` mirror was refused ("Unrecognized URL protocol")."""
    bad = tmp_path / "bad"
    bad.mkdir()
    text = (SHARED / "splitwise_conv.csv").read_text()
    (bad / "splitwise_conv.csv").write_text(text.replace("374,44", "374,45", 1))
    monkeypatch.setenv(datasets.TRACES_URL_ENV, SHARED.as_uri())
    got = datasets.fetch(["code"])
    assert got["code"].read_bytes() == (SHARED / "splitwise_code.csv").read_bytes()
    monkeypatch.setenv(datasets.TRACES_URL_ENV, bad.as_uri())
    with pytest.raises(datasets.TraceDownloadError, match="does not match the known hash"):
        datasets.fetch(["conversation"])
    assert not (cache / "splitwise_conv.csv").exists()
    with pytest.raises(datasets.TraceDownloadError, match="No such file"):
        datasets.fetch(["sharegpt"])  # bad/ has no such file
    # a FIFO would block the copy forever, a link to /dev/zero fill the disk
    os.mkfifo(bad / datasets.TRACES["summarization"].file)
    (bad / datasets.TRACES["translation"].file).symlink_to("/dev/zero")
    for name in ("summarization", "translation"):
        with pytest.raises(datasets.TraceDownloadError, match="is not a regular file"):
            datasets.fetch([name])


def test_a_failed_fetch_says_how_to_do_without_the_network(cache, monkeypatch):
    """Issue 22, item 13: offline, the error named neither --trace-dir nor the mirror."""
    monkeypatch.setenv(datasets.TRACES_URL_ENV, "http://127.0.0.1:9/none")  # nothing listens
    with pytest.raises(datasets.TraceDownloadError) as err:
        datasets.fetch(["code"])
    msg = str(err.value)
    assert f"copy the file into {cache}" in msg
    assert datasets.TRACES_URL_ENV in msg and "--trace-dir DIR" in msg


def test_traces_commands(server, cache, monkeypatch):
    base, _ = server
    runner = CliRunner()
    monkeypatch.setenv(datasets.TRACES_URL_ENV, base + "/good")
    res = runner.invoke(main, ["traces", "fetch", "summarization", "translation"])
    assert res.exit_code == 0, res.output
    for trace in (datasets.TRACES["summarization"], datasets.TRACES["translation"]):
        assert f"{trace.name}: {cache / trace.file}" in res.output
    res = runner.invoke(main, ["traces", "list", "--json"])
    listed = {t["name"]: t for t in json.loads(res.output)["traces"]}
    assert {n for n, t in listed.items() if t["cached"]} == {"summarization", "translation"}
    assert listed["code"]["url"] == f"{base}/good/splitwise_code.csv"
    assert runner.invoke(main, ["traces", "path"]).output == f"{cache}\n"
    assert runner.invoke(main, ["traces", "fetch", "nosuch"]).exit_code == 2
    monkeypatch.setenv(datasets.TRACES_URL_ENV, base + "/bad")
    res = runner.invoke(main, ["traces", "fetch", "conversation"])
    assert res.exit_code == 1
    assert "lpsched: error: trace 'conversation' (splitwise_conv.csv) from " in res.output


# ------------------------------------------------------------------ the reproductions


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return [{k: v for k, v in r.items() if k not in TIMING} for r in csv.DictReader(fh)]


def _fill(cache: Path, names) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(SHARED / datasets.TRACES[name].file, cache)


@needs_traces
def test_headline_reads_the_cache_and_says_what_it_skipped(cache, tmp_path, capsys):
    opts = dict(seeds=[0], n=40, progress=False, sensitivity=False)
    table = headline.run(tmp_path / "none", **opts)
    note = (
        "skipped the 'traces' column (real Azure conversation and arXiv rows): traces not "
        f"found in {cache}; run `lpsched traces fetch conversation summarization` or pass "
        "--trace-dir DIR"
    )
    assert table.endswith(f"Note: {note}.") and "| traces" not in table
    assert f"lpsched: {note}\n" in capsys.readouterr().err
    sources = {r["source"] for r in _rows(tmp_path / "none" / "headline.csv")}
    assert sources == set(headline.HEADLINE_SOURCES)

    _fill(cache, ["conversation"])  # one of the two files is not enough
    assert "skipped the 'traces' column" in headline.run(tmp_path / "half", **opts)

    _fill(cache, ["summarization"])
    table = headline.run(tmp_path / "cache", **opts)
    assert "| traces" in table and "skipped" not in table
    explicit = headline.run(tmp_path / "explicit", trace_dir=SHARED, **opts)
    assert explicit == table
    rows = _rows(tmp_path / "cache" / "headline.csv")
    assert {r["source"] for r in rows} == {*headline.HEADLINE_SOURCES, "traces"}
    assert rows == _rows(tmp_path / "explicit" / "headline.csv")


@needs_traces
def test_online_load_reads_the_cache_and_says_what_it_skipped(cache, tmp_path, capsys):
    opts = dict(seeds=[0], n=40, loads=[1.0], progress=False)
    table = online_load.run(tmp_path / "none", **opts)
    note = (
        "skipped the 'trace' table (Azure conversation arrivals): traces not found in "
        f"{cache}; run `lpsched traces fetch conversation` or pass --trace-dir DIR"
    )
    assert table.endswith(f"Note: {note}.") and "Azure conversation trace, own" not in table
    assert f"lpsched: {note}\n" in capsys.readouterr().err
    _fill(cache, ["conversation"])
    table = online_load.run(tmp_path / "none", **opts)  # the Poisson rows are reused
    assert "**Azure conversation trace, own arrivals" in table and "skipped" not in table
    assert {r["source"] for r in _rows(tmp_path / "none" / "online-load.csv")} == {
        "poisson",
        "trace",
    }

"""The public traces the workloads come from: where each file is, its sha256 and its licence.

:data:`TRACES` names the five per-request length traces (Llama-2 token counts) from which the
shipped length tables of :mod:`lpsched.generators.workloads` were derived, under the workload
names: ``conversation``, ``sharegpt``, ``summarization``, ``code``, ``translation``. Each entry
has the file's public URL, pinned to a commit of its repository, the sha256 of the file and the
repository's licence. :func:`fetch` (``lpsched traces fetch [NAME]``) downloads them with
pooch into a user cache folder and checks every hash; the reproductions that draw real rows
(``headline``, ``online-load``) read the traces there unless ``--trace-dir`` names a folder.

Environment:

``LPSCHED_DATA_DIR``
    The folder of the downloaded traces (default: ``traces`` in the platform's user cache
    folder for lpsched, ``~/.cache/lpsched/traces`` on Linux).
``LPSCHED_TRACES_URL``
    A base URL that replaces every file's own URL (``BASE/FILE``): a mirror, a local server,
    or a folder as ``file:///path/to/folder`` (copied, hash checked as for a download).

Source: ours; the traces are those of microsoft/vidur (MIT) and project-etalon/etalon
(Apache-2.0), ``data/processed_traces``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tabulate import tabulate

__all__ = [
    "Trace",
    "TRACES",
    "DATA_DIR_ENV",
    "TRACES_URL_ENV",
    "TraceDownloadError",
    "cache_dir",
    "trace_url",
    "is_cached",
    "describe_traces",
    "traces_table",
    "fetch",
    "cached_trace_dir",
    "skipped",
]

DATA_DIR_ENV = "LPSCHED_DATA_DIR"
TRACES_URL_ENV = "LPSCHED_TRACES_URL"

_VIDUR = "microsoft/vidur"
_VIDUR_COMMIT = "7d47513363ec447a741ac5e47241580b47724fbf"
_ETALON = "project-etalon/etalon"
_ETALON_COMMIT = "d5f18de15a2227a2d469365afc4fa9e2df0c631d"


@dataclass(frozen=True)
class Trace:
    """One public trace file.

    Attributes
    ----------
    name : str
        Registry name, the workload it gives (``conversation``, ...).
    file : str
        File name, in the cache and in a ``--trace-dir`` folder.
    repository, commit : str
        GitHub repository (``owner/name``) and the commit the URL is pinned to.
    sha256 : str
        Hex digest of the file.
    licence : str
        SPDX identifier of the repository's licence.
    rows : int
        Requests (CSV rows after the header).
    description : str
        What the requests are.
    """

    name: str
    file: str
    repository: str
    commit: str
    sha256: str
    licence: str
    rows: int
    description: str

    @property
    def url(self) -> str:
        """The file's public URL (raw file of ``repository`` at ``commit``)."""
        return (
            f"https://raw.githubusercontent.com/{self.repository}/{self.commit}/"
            f"data/processed_traces/{self.file}"
        )


TRACES: dict[str, Trace] = {
    t.name: t
    for t in (
        Trace(
            "conversation",
            "splitwise_conv.csv",
            _VIDUR,
            _VIDUR_COMMIT,
            "439e4138b7e384f316de614c071f7162be05b8af0cef866f82faacd1b0472249",
            "MIT",
            19366,
            "Azure LLM inference trace 2023, conversation service, with arrival times",
        ),
        Trace(
            "sharegpt",
            "sharegpt_8k_filtered_stats_llama2_tokenizer.csv",
            _ETALON,
            _ETALON_COMMIT,
            "6d6c296302a853e2669a674a96f269283e60c57e60363bd450588a1066919f9f",
            "Apache-2.0",
            30731,
            "ShareGPT chat conversations, context up to 8k, output up to 1,024",
        ),
        Trace(
            "summarization",
            "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv",
            _VIDUR,
            _VIDUR_COMMIT,
            "9d3580538d915ca75e4aaaa54590b42dbb17abc6d74c8913310cf07c232adcdc",
            "MIT",
            28257,
            "arXiv long-document summarization (Cohan et al. 2018), up to about 4k tokens",
        ),
        Trace(
            "code",
            "splitwise_code.csv",
            _VIDUR,
            _VIDUR_COMMIT,
            "f266b907d109d471c61283ab69771c17ad79a18b33ff6e96aa546346f52767a6",
            "MIT",
            8819,
            "Azure LLM inference trace 2023, code-completion service, with arrival times",
        ),
        Trace(
            "translation",
            "bwb_stats_llama2_tokenizer_filtered_v2.csv",
            _ETALON,
            _ETALON_COMMIT,
            "389419d2f2e55149b5d6ccfedb881572798d39650436ab86fd61f3c40337a990",
            "Apache-2.0",
            33768,
            "bilingual web-book translation (long prompts and long outputs)",
        ),
    )
}


class TraceDownloadError(OSError):
    """A trace could not be downloaded, or the download's sha256 is not the registered one
    (the file is then deleted); the message names the trace and the URL. Source: ours."""


def _trace(name: str) -> Trace:
    if name not in TRACES:
        raise KeyError(f"unknown trace {name!r}; known: {', '.join(TRACES)}")
    return TRACES[name]


def cache_dir() -> Path:
    """The folder :func:`fetch` downloads into: ``$LPSCHED_DATA_DIR``, else ``traces`` in the
    platform's user cache folder for lpsched (``~/.cache/lpsched/traces`` on Linux). Not
    created here."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser()
    import pooch  # pooch (and requests) load only when a trace is looked up

    return Path(pooch.os_cache("lpsched")) / "traces"


def trace_url(name: str) -> str:
    """The URL :func:`fetch` downloads the trace ``name`` from: ``$LPSCHED_TRACES_URL/FILE``
    when the variable is set, else the file's pinned public URL."""
    trace = _trace(name)
    base = os.environ.get(TRACES_URL_ENV)
    return f"{base.rstrip('/')}/{trace.file}" if base else trace.url


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_cached(name: str, folder: str | os.PathLike[str] | None = None) -> bool:
    """Whether ``folder`` (default: :func:`cache_dir`) holds the trace ``name`` with its
    registered sha256."""
    trace = _trace(name)
    path = Path(cache_dir() if folder is None else folder) / trace.file
    return path.is_file() and _sha256(path) == trace.sha256


def describe_traces() -> list[dict[str, Any]]:
    """The registered traces, one dict each (``lpsched traces list``).

    Returns
    -------
    list of dict
        ``name``, ``file``, ``rows``, ``licence``, ``repository``, ``url``
        (:func:`trace_url`), ``sha256``, ``cached`` (:func:`is_cached` in :func:`cache_dir`)
        and ``description``. Source: ours.
    """
    return [
        {
            "name": t.name,
            "file": t.file,
            "rows": t.rows,
            "licence": t.licence,
            "repository": t.repository,
            "url": trace_url(t.name),
            "sha256": t.sha256,
            "cached": is_cached(t.name),
            "description": t.description,
        }
        for t in TRACES.values()
    ]


def fetch(names: Iterable[str] | None = None, *, progressbar: bool = False) -> dict[str, Path]:
    """Download traces into :func:`cache_dir` (those already there with the right sha256 are
    kept) and check each file's sha256.

    Parameters
    ----------
    names : iterable of str, optional
        Registry names (default: all of :data:`TRACES`).
    progressbar : bool
        Show a download progress bar on standard error.

    Returns
    -------
    dict of str to Path
        Trace name -> path of the checked file.

    Raises
    ------
    KeyError
        An unknown name (the message lists the known ones).
    TraceDownloadError
        A failed download or a hash mismatch (the downloaded file is deleted), naming the
        trace and the URL.

    Notes
    -----
    Source: ours, with pooch (``pooch.retrieve`` with the known hash).
    """
    import pooch

    traces = [_trace(n) for n in (TRACES if names is None else names)]
    folder = cache_dir()
    out = {}
    for trace in traces:
        url = trace_url(trace.name)
        try:
            path = pooch.retrieve(
                url,
                known_hash=f"sha256:{trace.sha256}",
                fname=trace.file,
                path=folder,
                progressbar=progressbar,
                downloader=_copy_file if url.startswith("file:") else None,
            )
        except (ValueError, OSError) as exc:  # hash mismatch; HTTP and connection errors
            raise TraceDownloadError(
                f"trace {trace.name!r} ({trace.file}) from {url}: {exc}. Without the network, "
                f"copy the file into {folder}, point ${TRACES_URL_ENV} at a mirror, or give "
                "the reproductions --trace-dir DIR with your own copy"
            ) from None
        out[trace.name] = Path(path)
        _readable_by_all(out[trace.name])
    return out


def _copy_file(url: str, output_file: Any, pooch_object: Any, check_only: bool = False) -> Any:
    """A pooch downloader for ``file://`` URLs (pooch knows http, ftp, sftp and doi): copy
    the local file to ``output_file`` (a path or a binary file object); ``check_only``: whether
    it exists. Raises :class:`FileNotFoundError` when it does not, :class:`OSError` when it is
    not a regular file (a FIFO, a device, also through a link). Source: ours."""
    source = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    if check_only:
        return source.is_file()
    if source.exists() and not source.resolve().is_file():  # a FIFO would hang, /dev/zero fill
        raise OSError(f"{source} is not a regular file")
    with source.open("rb") as src:
        if hasattr(output_file, "write"):
            shutil.copyfileobj(src, output_file)
        else:
            with open(output_file, "wb") as dst:
                shutil.copyfileobj(src, dst)
    return None


def _readable_by_all(path: Path) -> None:
    """Give a downloaded file the mode a new file gets under the user's umask (pooch writes
    through a private temporary file, mode 0600), so that a shared cache stays readable."""
    umask = os.umask(0)
    os.umask(umask)
    path.chmod(0o666 & ~umask)


def cached_trace_dir(names: Sequence[str]) -> Path | None:
    """:func:`cache_dir` if it holds every trace of ``names`` with its sha256, else ``None``:
    the folder a reproduction reads when no ``trace_dir`` is given."""
    return cache_dir() if all(is_cached(n) for n in names) else None


def skipped(what: str, names: Sequence[str]) -> str:
    """Say on standard error, and return for the report, that ``what`` was left out because
    the traces ``names`` are not in the cache, and how to get them.

    Parameters
    ----------
    what : str
        The part of the report left out, e.g. ``"the 'traces' column"``.
    names : sequence of str
        Registry names of the traces it needs.

    Returns
    -------
    str
        One line for the Markdown report.
    """
    note = (
        f"skipped {what}: traces not found in {cache_dir()}; run "
        f"`lpsched traces fetch {' '.join(names)}` or pass --trace-dir DIR"
    )
    print(f"lpsched: {note}", file=sys.stderr, flush=True)
    return note


def traces_table() -> str:
    """The registered traces as a table (name, file, rows, licence, repository, cached) and
    the cache folder under it (``lpsched traces list``).

    Notes
    -----
    Source: ours.
    """
    keys = ["name", "file", "rows", "licence", "repository", "cached"]
    table = tabulate([[r[k] for k in keys] for r in describe_traces()], headers=keys)
    return f"{table}\ncache: {cache_dir()}"

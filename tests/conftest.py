"""Shared hypothesis strategies: small random instances with the extremes of the model mixed in.

The slow reference implementations (brute-force memory, round-by-round executor, Phase-1
enumeration) live in the test modules that use them, written from SPEC.md alone.
"""

from __future__ import annotations

import os
import signal
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from lpsched import plugins
from lpsched.executor import execute
from lpsched.instance import Instance
from lpsched.policies import registry

# No property test may fail because the machine is slow (issue 22, item 11): no per-example
# deadline and no too_slow health check; everything else is hypothesis' default. A test's own
# ``suppress_health_check`` replaces this list, so those name too_slow as well.
settings.register_profile("lpsched", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("lpsched")


def pytest_addoption(parser):
    parser.addoption(
        "--slow",
        action="store_true",
        help="also run the tests marked slow (the full selection; see the README for times)",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "slow: a test of many seconds (real solves to proven optimality, whole reproductions, "
        "notebooks); deselected unless --slow is given",
    )


def pytest_collection_modifyitems(config, items):
    """Without ``--slow``, deselect the tests marked slow (the fast default selection)."""
    if config.getoption("--slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


@pytest.fixture(autouse=True, scope="session")
def _ctrl_c_raises():
    """Python's own SIGINT handler, also when the suite was started in the background by a
    shell (which starts it with SIGINT ignored, so that ``_thread.interrupt_main`` in the
    Ctrl-C tests would do nothing and their solves would run to their time limits)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.fixture(autouse=True, scope="session")
def _empty_trace_cache(tmp_path_factory):
    """Point the trace cache at an empty folder, so that a developer's fetched traces
    (``lpsched traces fetch``) never change what a test computes; tests that need the
    traces pass ``trace_dir`` or set ``LPSCHED_DATA_DIR`` themselves."""
    old = os.environ.get("LPSCHED_DATA_DIR")
    os.environ["LPSCHED_DATA_DIR"] = str(tmp_path_factory.mktemp("trace-cache"))
    yield
    if old is None:
        os.environ.pop("LPSCHED_DATA_DIR", None)
    else:
        os.environ["LPSCHED_DATA_DIR"] = old


@pytest.fixture(autouse=True, scope="session")
def _compiled_kernels():
    """Compile the numba kernels once, before any test, into numba's on-disk cache: the
    command-line tests start fresh processes, which then load the kernels in a fraction of a
    second instead of compiling them (10-30 s on a clean clone), so that a test sending a
    signal or timing a run does not land in the middle of a compilation."""
    from lpsched.kernels import BACKEND

    if BACKEND == "numba":
        from lpsched.generators.workloads import generate
        from lpsched.policies.registry import run_policy

        inst = generate("conversation", 300, 16492, seed=1)
        for spec in ("sorted-f", "mcsf+backfill"):
            run_policy(inst, spec, solver="quantile")
        online = generate("conversation", 300, 16492, seed=1, arrival_rate=0.05)
        run_policy(online, "online-sorted-f", solver="quantile")
    yield


# --------------------------------------------------------------------------- own policy

#: A plug-in module: the list policy ``alpha-sort`` (requests by s_i + alpha * o_i, ties by
#: index) with the option ``alpha``; every call appends "PID TYPE VALUE" to ``calls.log``.
OWN_POLICY_MODULE = """
import os

import numpy as np

import lpsched

LOG = {log!r}


def alpha_sort(instance, alpha=0.0):
    with open(LOG, "a") as fh:
        fh.write(f"{{os.getpid()}} {{type(alpha).__name__}} {{alpha!r}}\\n")
    return np.argsort(instance.prefill + alpha * instance.decode, kind="stable")


lpsched.register_policy("alpha-sort", alpha_sort, "by s_i + alpha o_i", options=("alpha",))
"""


class OwnPolicy:
    """The plug-in of the ``own_policy`` fixture: its module, policy name and call log."""

    module = "my_alpha_policy"
    name = "alpha-sort"

    def __init__(self, folder):
        self.folder = folder
        self.log = folder / "calls.log"
        (folder / f"{self.module}.py").write_text(OWN_POLICY_MODULE.format(log=str(self.log)))

    def calls(self) -> list[tuple[int, str, str]]:
        """(pid, type name, repr) of every call so far, in every process."""
        if not self.log.exists():
            return []
        return [
            (int(pid), kind, value)
            for pid, kind, value in (
                line.split(" ", 2) for line in self.log.read_text().split("\n") if line
            )
        ]

    @staticmethod
    def tel(instance: Instance, alpha: float = 0.0, backfill: bool = False) -> int:
        """The TEL the policy must get: its order run by the executor."""
        order = np.argsort(instance.prefill + alpha * instance.decode, kind="stable")
        return execute(instance, order, backfill=backfill).tel


@pytest.fixture
def own_policy(tmp_path, monkeypatch):
    """A plug-in module in ``tmp_path``, the current folder (as for ``--import``); the policies,
    tried plug-ins, ``sys.path``, ``sys.modules`` and ``LPSCHED_PLUGINS`` are restored after."""
    policies, loaded, imported = (
        dict(registry.POLICIES),
        set(plugins._loaded),
        dict(plugins._imported),
    )
    monkeypatch.setenv(registry.PLUGINS_ENV, "")
    monkeypatch.setattr(sys, "path", [*sys.path])
    monkeypatch.chdir(tmp_path)
    plugin = OwnPolicy(tmp_path)
    yield plugin
    registry.POLICIES.clear()
    registry.POLICIES.update(policies)
    plugins._loaded.clear()
    plugins._loaded.update(loaded)
    plugins._imported.clear()
    plugins._imported.update(imported)
    sys.modules.pop(plugin.module, None)


# --------------------------------------------------------------------------- strategies


@st.composite
def instances(
    draw,
    max_n: int = 8,
    max_memory: int = 30,
    max_decode: int = 8,
    max_arrival: int = 6,
    arrivals: bool = True,
) -> Instance:
    """Small random instances, with the extremes mixed in.

    ``kind`` picks: ``random`` (independent requests), ``identical`` (one request repeated),
    ``tight`` (some requests with ``s + o = M``), ``tiny`` (``M`` in 1..5). Arrivals, when
    enabled, are zero or random in ``0..max_arrival``.
    """
    kind = draw(st.sampled_from(["random", "identical", "tight", "tiny"]))
    memory = draw(st.integers(1, 5)) if kind == "tiny" else draw(st.integers(1, max_memory))
    n = draw(st.integers(1, max_n))

    def one(tight: bool) -> tuple[int, int]:
        o = draw(st.integers(1, min(max_decode, memory)))
        s = memory - o if tight else draw(st.integers(0, memory - o))
        return s, o

    if kind == "identical":
        reqs = [one(draw(st.booleans()))] * n
    elif kind == "tight":
        reqs = [one(draw(st.booleans())) for _ in range(n)]
    else:
        reqs = [one(False) for _ in range(n)]
    if arrivals and draw(st.booleans()):
        arrival = draw(st.lists(st.integers(0, max_arrival), min_size=n, max_size=n))
    else:
        arrival = [0] * n
    return Instance.from_arrays(
        [s for s, _ in reqs], [o for _, o in reqs], memory, arrival, name=f"hyp-{kind}"
    )


@st.composite
def instance_and_order(draw, **kwargs) -> tuple[Instance, list[int]]:
    """An instance from :func:`instances` and a random priority list (a permutation)."""
    inst = draw(instances(**kwargs))
    order = draw(st.permutations(list(range(inst.n))))
    return inst, list(order)

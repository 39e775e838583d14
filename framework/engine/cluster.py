"""The Dask engine: partitions counted by the workers of a Dask cluster (``pip install 'tokembed[dask]'``).

The client submits descriptions of partitions; each worker reads its byte range of the files, counts it, and the
partial counts are merged on the workers by an ordered tree of merge tasks, so only the final merged counts travel
to the client. A worker that dies is replaced and its tasks are recomputed by Dask (the result is the same: every
task is a pure function of its partition); a task that kills its worker ``distributed.scheduler.allowed-failures``
+ 1 times fails the count with one message naming the partition.
"""

from __future__ import annotations

import logging
import os
import uuid
from typing import Any, Callable, Sequence

from ..errors import EngineError
from .base import (
    DEFAULT_FAN_IN,
    Engine,
    EngineStats,
    Progress,
    _check_partitions,
    count_leaf,
    describe_partition,
    describe_span,
    failure,
    join_shards,
    merge_counts,
    merge_nodes,
    pick_shard,
    tree_levels,
)

__all__ = ["DaskEngine", "dask_missing", "connect", "check_cluster"]

#: Seconds to wait for a scheduler to answer, and for the first workers to join it.
CONNECT_TIMEOUT = 10
WORKERS_TIMEOUT = 60


def dask_missing() -> str | None:
    """None when ``dask`` and ``distributed`` can be imported, else what to install."""
    import importlib.util

    missing = [name for name in ("dask", "distributed") if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (f"the dask engine needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
            "installed: pip install 'tokembed[dask]'")


def address_problem(address: str) -> str | None:
    """What is wrong with a scheduler address, or None: ``tcp://HOST:PORT`` (or ``tls://``), PORT in 1-65535."""
    import re

    m = re.fullmatch(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(\d+)", address.strip())
    if not m:
        return (f"expected a scheduler address tcp://HOST:PORT (as `dask scheduler` prints it), got {address!r}")
    if not 1 <= int(m.group(3)) <= 65535:
        return f"port {m.group(3)} of {address} is outside 1-65535"
    return None


def _unreachable(address: str, timeout: float) -> str | None:
    """Why nothing listens at ``address`` (refused, unknown host, no answer), found by one TCP connection, or
    None when something accepts it."""
    import socket

    host, _, port = address.split("://", 1)[-1].rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=min(timeout, 5)).close()
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def connect(address: str, timeout: float | None = None) -> Any:
    """A ``distributed.Client`` connected to the scheduler at ``address`` (waiting ``timeout`` seconds, by default
    :data:`CONNECT_TIMEOUT`).

    A plain TCP connection is tried first (a refused connection fails at once); the Dask handshake then runs on a
    helper thread and is abandoned after ``timeout`` seconds, so a service that accepts the connection but
    does not speak Dask's protocol (a web server, say) gives the same clear error instead of a hang.

    Raises
    ------
    EngineError
        If the extra is missing, the address is malformed, or no scheduler answers within ``timeout`` seconds.
    """
    import threading

    missing = dask_missing()
    if missing:
        raise EngineError(missing)
    problem = address_problem(address)
    if problem:
        raise EngineError(problem)
    from distributed import Client

    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    hint = (f"start one (`dask scheduler`, then `dask worker {address}` on each machine) or drop engine.address to "
            "start a local cluster")
    why = _unreachable(address, timeout)
    if why:
        raise EngineError(f"no Dask scheduler answers at {address}: {why}; {hint}")
    box: dict[str, Any] = {}

    def attempt() -> None:
        try:
            box["client"] = Client(address, timeout=timeout, set_as_default=False)
        except BaseException as exc:  # noqa: BLE001 - reported below, on the caller's thread
            _close_failed_client(exc, Client)
            box["error"] = exc

    thread = threading.Thread(target=attempt, name="tokembed-connect", daemon=True)
    thread.start()
    thread.join(timeout)
    if "client" in box:
        return box["client"]
    exc = box.get("error")
    if exc is None:
        raise EngineError(f"no Dask scheduler answers at {address}: something accepts the connection but gives no "
                          f"answer to Dask's handshake within {timeout:g} s (not a Dask scheduler?); {hint}")
    what = ("what answers does not speak Dask's protocol" if isinstance(exc, MemoryError) else
            f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    raise EngineError(f"no Dask scheduler answers at {address}: the handshake failed ({what}); {hint}") from None


def _close_failed_client(exc: BaseException, client_class: type) -> None:
    """Close the half-built Client that a failed constructor leaves in the traceback's frames: otherwise its
    ``__del__`` tries to close it again when the interpreter exits, waits 20 s and prints a traceback."""
    tb = exc.__traceback__
    while tb is not None:
        obj = tb.tb_frame.f_locals.get("self")
        if isinstance(obj, client_class):
            try:
                obj.close(timeout=2)
            except Exception:  # noqa: BLE001 - it never connected; nothing to release
                pass
            try:
                obj.status = "closed"
            except Exception:  # noqa: BLE001
                pass
        tb = tb.tb_next


def check_cluster(client: Any, wanted: int | None = None) -> list[str]:
    """Problems of a connected cluster: workers whose tokembed version differs from this process's
    (``Client.get_versions``). A scheduler with fewer workers than ``wanted`` (default 1) is only warned about
    (workers may join later, or be restarting; a run waits up to :data:`WORKERS_TIMEOUT` seconds for them)."""
    import warnings

    from .._version import __version__

    problems: list[str] = []
    versions = client.get_versions(packages=["tokembed"])
    workers = versions.get("workers") or {}
    need = wanted or 1
    if len(workers) < need:
        have = "no worker yet" if not workers else f"{len(workers)} worker{'s' if len(workers) != 1 else ''}"
        warnings.warn(f"engine: the scheduler has {have}, the recipe wants {need} (a run waits {WORKERS_TIMEOUT} s "
                      "for them): start `dask worker ADDRESS` on the machines that count", stacklevel=2)
    wrong = {addr: (info or {}).get("packages", {}).get("tokembed") for addr, info in workers.items()}
    wrong = {addr: v for addr, v in wrong.items() if v != __version__}
    if wrong:
        shown = ", ".join(f"{addr} has {v or 'no tokembed'}" for addr, v in sorted(wrong.items())[:3])
        more = f" and {len(wrong) - 3} more" if len(wrong) > 3 else ""
        problems.append(f"every worker needs tokembed {__version__} (this machine's): {shown}{more}; install the "
                        "same version on the workers")
    return problems


def _client_environment() -> dict[str, str | None]:
    """This process's values of the variables a Dask nanny sets in ``os.environ`` before spawning a worker
    (``distributed.nanny.pre-spawn-environ``: one BLAS / OpenMP thread, ...; and ``PYTHONHASHSEED``), after loading
    the BLAS libraries the client uses (NumPy's and SciPy's), so that they start with this process's settings.

    The nanny runs in this process and never restores them: without this, a library loaded after the cluster
    started (SciPy's BLAS, first used by SVD) would run on one thread here, slower, and its floating-point sums
    in another order than the same recipe without an engine (``tokembed run`` must give the same bytes)."""
    import dask.config

    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS now)

    names = set(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {}) | {"PYTHONHASHSEED"}
    return {name: os.environ.get(name) for name in names}


def _restore_environment(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


class DaskEngine(Engine):
    """Count on the workers of a Dask cluster: an existing one at ``address``, or a ``LocalCluster`` of
    ``workers`` processes on 127.0.0.1 (one thread each, no dashboard), started at the first count and closed
    with the engine.

    Parameters
    ----------
    address : str or None
        ``tcp://HOST:PORT`` of a running scheduler; None starts a local cluster.
    workers : int or None, default None
        Local cluster: its worker processes (2 when None). Existing cluster: wait until this many workers have
        joined before counting (when None: at least one).
    partition_mb : float, default 128
        Target size of a partition in MiB (lowered so that there are at least 4 partitions per worker).
    fan_in : int, default 4
        Partial results merged by one merge task.
    env : dict, optional
        Environment variables of the local cluster's worker processes (``NUMBA_CACHE_DIR``, ...).

    Raises
    ------
    EngineError
        When started: the extra is missing, the scheduler does not answer, or no worker joins in time.
    """

    type = "dask"

    def __init__(self, address: str | None = None, workers: int | None = None, partition_mb: float | None = None,
                 fan_in: int = DEFAULT_FAN_IN, env: dict[str, str] | None = None):
        super().__init__(workers or 2, partition_mb, fan_in)
        self.address = address
        self.wanted = workers
        self.env = dict(env or {})
        self.client: Any = None
        self.cluster: Any = None

    # -- lifecycle ----------------------------------------------------------------------------------------------
    def start(self) -> Any:
        """Connect (or start the local cluster) if not done yet; return the client."""
        if self.client is not None:
            return self.client
        missing = dask_missing()
        if missing:
            raise EngineError(missing)
        if self.address is not None:
            self.client = connect(self.address)
            need = self.wanted or 1
        else:
            from distributed import Client, LocalCluster

            saved = _client_environment()
            try:
                # no dashboard; the scheduler's own HTTP server (health, metrics) on a free loopback port, not
                # 8787, which another cluster of this machine may hold (distributed then warns on every run)
                # silence_logs: a task's error is reported once, by the engine, with its partition; distributed's
                # own log lines (a worker's traceback, heartbeats cut at shutdown) would come first, on stderr
                self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                            host="127.0.0.1", dashboard_address=None, env=self.env or None,
                                            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                            silence_logs=logging.CRITICAL)
            except Exception as exc:
                raise EngineError(f"could not start a local Dask cluster of {self.workers} workers: "
                                  f"{type(exc).__name__}: {exc}") from None
            finally:
                _restore_environment(saved)
            self.client = Client(self.cluster, set_as_default=False)
            need = self.workers
        try:
            self.client.wait_for_workers(need, timeout=WORKERS_TIMEOUT)
        except (TimeoutError, OSError):
            where = self.address or "the local cluster"
            have = len(self.client.scheduler_info().get("workers", {}))
            self.close()
            raise EngineError(f"{where}: {have} of the {need} worker{'s' if need != 1 else ''} wanted joined within "
                              f"{WORKERS_TIMEOUT} s: start more (`dask worker {where}`) or lower engine.workers") \
                from None
        return self.client

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None

    def n_workers(self) -> int:
        client = self.start()
        return max(1, len(client.scheduler_info().get("workers", {})))

    # -- work ---------------------------------------------------------------------------------------------------
    def _warm(self, client: Any, warm: Callable[[], None], run: str) -> None:
        """Run ``warm`` on one worker of each host, and wait: the first compilation writes Numba's cache once per
        machine, before the other workers read it (concurrent cache writes have crashed Numba, numba#4807)."""
        hosts: dict[str, str] = {}
        for addr, info in sorted(client.scheduler_info().get("workers", {}).items()):
            hosts.setdefault(info.get("host", addr), addr)
        futures = [client.submit(warm, key=f"tokembed-warm-{run}-{i}", workers=[addr], allow_other_workers=True,
                                 pure=False) for i, addr in enumerate(hosts.values())]
        for fut in futures:
            try:
                fut.result()
            except Exception as exc:
                raise failure(exc, "warming the workers up (counting a few sample documents)") from exc

    def map_reduce(self, count_fn: Callable[[Any], Any], partitions: Sequence[Any],
                   merge: Callable[[Any, Any], Any] = merge_counts, *, warm: Callable[[], None] | None = None,
                   progress: Progress | None = None, shards: int = 1) -> Any:
        from distributed import as_completed

        parts = _check_partitions(partitions)
        client = self.start()
        run = uuid.uuid4().hex[:12]
        if warm is not None:
            self._warm(client, warm, run)
        levels = tree_levels(len(parts), self.fan_in)
        stats = EngineStats(self.type, self.n_workers(), len(parts), self.fan_in, len(levels))
        where: dict[str, str] = {}
        leaves = []
        for i, part in enumerate(parts):
            fut = client.submit(count_leaf, count_fn, part, key=f"tokembed-count-{run}-{i}", pure=False, priority=0)
            where[fut.key] = describe_partition(part, len(parts))
            leaves.append(fut)
        nbytes = {fut.key: getattr(part, "nbytes", 0) for fut, part in zip(leaves, parts)}
        merges = []

        def tree(below: list, tag: str) -> Any:
            """Submit the ordered merge tree over ``below`` (one future per partition); return its root."""
            spans = [(i, i + 1) for i in range(len(parts))]
            for k, level in enumerate(levels, start=1):
                above, above_spans = [], []
                for j, group in enumerate(level):
                    first, last = spans[group.start][0], spans[group.stop - 1][1]
                    fut = client.submit(merge_nodes, merge, *[below[g] for g in group],
                                        key=f"tokembed-merge-{run}{tag}-{k}-{j}", pure=False, priority=10)
                    where[fut.key] = describe_span(parts, first, last)
                    above.append(fut)
                    above_spans.append((first, last))
                merges.extend(above)
                below, spans = above, above_spans
            return below[0]

        if shards <= 1:
            roots = [tree(leaves, "")]
        else:  # each shard cut from its leaf where the leaf lies, then merged by its own tree
            roots = []
            for k in range(shards):
                picks = []
                for i, leaf in enumerate(leaves):
                    fut = client.submit(pick_shard, leaf, k, shards, key=f"tokembed-shard-{run}-{k}-{i}", pure=False,
                                        priority=5)
                    where[fut.key] = f"{describe_partition(parts[i], len(parts))}, shard {k + 1}/{shards}"
                    picks.append(fut)
                merges.extend(picks)
                roots.append(tree(picks, f"-s{k}"))
        # the client holds the other futures in leaves / merges until they are done
        order = {fut.key: n for n, fut in enumerate([*leaves, *merges])}
        try:
            for fut in as_completed([*leaves, *merges], loop=client.loop):
                if fut.status == "error":
                    self._raise(fut, leaves, merges, order, where)
                if fut.key in nbytes and progress is not None:
                    progress.advance(nbytes[fut.key])
            node = roots[0].result() if len(roots) == 1 else join_shards([r.result() for r in roots])
        except BaseException:
            client.cancel([*leaves, *merges], force=True)
            raise
        finally:
            leaves.clear()
            merges.clear()
        stats.count_seconds, stats.merge_seconds = node.count_seconds, node.merge_seconds
        self.last_stats = stats
        return node.value

    @staticmethod
    def _raise(fut: Any, leaves: list, merges: list, order: dict, where: dict) -> None:
        """Raise the error of the first failed task in tree order (a failed partition before the merges that
        depend on it, whose error is the same)."""
        from distributed import KilledWorker

        failed = sorted([f for f in (*leaves, *merges) if f.status == "error"] or [fut], key=lambda f: order[f.key])
        first = failed[0]
        exc = first.exception()
        what = where.get(first.key, first.key)
        if isinstance(exc, KilledWorker):
            # Dask counts a death against every task the worker held (running, or queued behind the one that
            # crashed it), so name each task that reached the limit
            killed = [f for f in failed if isinstance(f.exception(), KilledWorker)]
            named = "; ".join(where.get(f.key, f.key) for f in killed[:3]) + (
                f"; and {len(killed) - 3} more" if len(killed) > 3 else "")
            them = "it" if len(killed) == 1 else "them (a death counts against every task the worker held)"
            limit = exc.allowed_failures
            last = getattr(exc.last_worker, "address", exc.last_worker)
            raise EngineError(
                f"{named}: the worker running {them} died {limit + 1} times (Dask's retry limit, "
                f"distributed.scheduler.allowed-failures={limit}); the last was {last}. "
                "A task that kills every worker it runs on usually runs out of memory: lower engine.partition_mb, or "
                "give the workers more memory") from None
        raise failure(exc, what) from exc

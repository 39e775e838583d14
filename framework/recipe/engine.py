"""The ``engine:`` section of a recipe: where corpus statistics are counted (:mod:`tokembed.engine`).

```yaml
engine: {type: dask, address: tcp://10.0.0.5:8786, workers: 2, partition_mb: 128}
engine: dask                        # short form: a LocalCluster of 2 workers on 127.0.0.1
```
``type: dask`` needs the ``dask`` extra; with ``address``, the scheduler must answer and every worker must run this
tokembed version: all checked before any work (``tokembed validate`` too). Private to :mod:`tokembed.recipe`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any, Literal

from yaml.nodes import MappingNode, Node, ScalarNode

from ..engine import DEFAULT_PARTITION_MB, ENGINE_TYPES, dask_missing, open_engine
from ..errors import EngineError
from .context import Context
from .nodes import did_you_mean, join_path, mapping_items
from ..params import Interval
from .params import INVALID, coerce

__all__ = ["EngineSpec", "check_engine", "ENGINE_KEYS"]

#: Keys of ``engine:`` and their types.
ENGINE_KEYS: dict[str, tuple[Any, Any]] = {
    "type": (Literal[ENGINE_TYPES], None),
    "address": (str | None, None),
    "workers": (int | None, Interval(int, 1, None)),
    "partition_mb": (float | None, Interval(float, 0.001, None, finite=False)),
}


@dataclass(frozen=True)
class EngineSpec:
    """The ``engine:`` section.

    Attributes
    ----------
    type : {"local", "dask"}
    address : str or None
        ``dask``: the scheduler of an existing cluster; None starts a LocalCluster on 127.0.0.1.
    workers : int or None
        ``local``: threads; ``dask``: worker processes of the local cluster, or workers to wait for.
    partition_mb : float or None
        Target partition size in MiB (``dask``: 128 when None; ``local``: None streams the corpus).
    location : str
        ``FILE:LINE:COL`` of the section.
    """

    type: Literal["local", "dask"] = "local"
    address: str | None = None
    workers: int | None = None
    partition_mb: float | None = None
    location: str = _field(default="", compare=False)

    def open(self, env: dict[str, str] | None = None) -> Any:
        """The engine (a context manager; see :func:`tokembed.engine.open_engine`)."""
        return open_engine(self.type, address=self.address, workers=self.workers, partition_mb=self.partition_mb,
                           env=env)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.address is not None:
            out["address"] = self.address
        if self.workers is not None:
            out["workers"] = self.workers
        if self.partition_mb is not None:
            mb = self.partition_mb
            out["partition_mb"] = int(mb) if float(mb).is_integer() else mb
        elif self.type == "dask":
            out["partition_mb"] = DEFAULT_PARTITION_MB
        return out


def check_engine(ctx: Context, node: Node) -> EngineSpec | None:
    """The ``engine:`` mapping (or the short form ``engine: dask``) as an :class:`EngineSpec`, or None after
    recording its problems; for ``dask``, also whether the extra is installed and, with ``address``, whether the
    scheduler answers with workers of this tokembed version."""
    problems = ctx.problems
    if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null":
        return None  # a bare engine: line counts as absent, as engine: {} and any empty section
    if isinstance(node, ScalarNode) and node.value in ENGINE_TYPES:
        items = [("type", node, node)]
    elif isinstance(node, MappingNode):
        items = mapping_items(node)
        if not items:
            return None  # engine: {} counts as absent, as any empty section
    else:
        problems.add(node, "engine", f"expected {{type: {' | '.join(ENGINE_TYPES)}, address: ..., workers: N, "
                                     "partition_mb: MB}, or the short form `engine: dask`")
        return None
    values: dict[str, Any] = {}
    nodes: dict[str, Node] = {}
    ok = True
    for key, knode, vnode in items:
        path = join_path("engine", key)
        if key not in ENGINE_KEYS:
            problems.add(knode, path, f"unknown engine key.{did_you_mean(key, list(ENGINE_KEYS))} Allowed: "
                                      f"{', '.join(ENGINE_KEYS)}")
            ok = False
            continue
        hint, constraint = ENGINE_KEYS[key]
        value = coerce(vnode, hint, path, problems, constraint)
        if value is INVALID:
            ok = False
        else:
            values[key], nodes[key] = value, vnode
    if values.get("partition_mb") is not None:
        values["partition_mb"] = float(values["partition_mb"])
        if not math.isfinite(values["partition_mb"]):
            problems.add(nodes["partition_mb"], "engine.partition_mb", "expected a finite float >= 0.001 (MiB), got "
                                                                       f"{values['partition_mb']}")
            ok = False
    kind = values.get("type", "local")
    if values.get("address") is not None:
        from ..engine.cluster import address_problem

        problem = address_problem(values["address"])
        if problem:
            problems.add(nodes["address"], "engine.address", problem)
            ok = False
    if kind == "local" and values.get("address") is not None:
        problems.add(nodes["address"], "engine.address", "only the dask engine connects to a scheduler: set "
                                                         "type: dask, or drop address")
        ok = False
    if not ok:
        return None
    spec = EngineSpec(**values, location=problems.where(node))
    if spec.type == "dask":
        missing = dask_missing()
        if missing:
            problems.add(nodes.get("type", node), "engine.type", missing)
            return None
        if spec.address is not None:
            _check_scheduler(ctx, spec, nodes["address"])
    return spec


def _check_scheduler(ctx: Context, spec: EngineSpec, node: Node) -> None:
    """The scheduler at ``spec.address`` answers, has workers, and they run this tokembed version."""
    from ..engine.cluster import check_cluster, connect

    try:
        client = connect(spec.address)
    except EngineError as exc:
        ctx.problems.add(node, "engine.address", str(exc))
        return
    try:
        for problem in check_cluster(client, wanted=spec.workers):
            ctx.problems.add(node, "engine.address", problem)
    finally:
        client.close()

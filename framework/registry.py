"""Build the component registry from installed plugins.

A plugin is found through the entry-point group ``tokembed`` (one entry point per plugin module). The built-ins in
``tokembed.plugins`` are declared in tokembed's own ``pyproject.toml`` exactly as a third party declares its own,
so every plugin takes the same path. Nothing here runs at import time: call :func:`build_registry`.

Switches, mirroring pytest's:

- ``TOKEMBED_DISABLE_PLUGIN_AUTOLOAD=1`` (or ``autoload=False``): third-party entry points are not loaded; the
  built-ins of the ``tokembed`` distribution still are.
- ``TOKEMBED_PLUGINS=mod1,mod2`` (or ``plugins=[...]``): extra plugin modules (or objects) to register explicitly.
- ``blocked`` (``tokembed -p no:NAME``): entry-point names or distribution names that are not loaded.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata as metadata
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable

import pluggy

from . import hookspecs
from .components import Component, Embedder, Tokenizer, Vectorizer
from .errors import PluginError, UnknownComponentError

__all__ = [
    "KINDS",
    "ENTRY_POINT_GROUP",
    "PluginInfo",
    "ComponentInfo",
    "PluginFailure",
    "Registry",
    "build_registry",
    "load_catalogue",
]

ENTRY_POINT_GROUP = "tokembed"
OWN_DISTRIBUTION = "tokembed"

#: The hook that registers metric classes (subclasses of :class:`tokembed.metrics.Metric`).
METRICS_HOOK = "tokembed_register_metrics"

#: kind -> (hook name, base class)
KINDS: dict[str, tuple[str, type[Component]]] = {
    "tokenizer": ("tokembed_register_tokenizers", Tokenizer),
    "vectorizer": ("tokembed_register_vectorizers", Vectorizer),
    "embedder": ("tokembed_register_embedders", Embedder),
}


@dataclass(frozen=True)
class PluginInfo:
    """Where a plugin came from: entry-point name, distribution and version, and the entry-point target."""

    name: str
    distribution: str | None
    version: str | None
    target: str

    def describe(self) -> str:
        dist = f"{self.distribution} {self.version}" if self.distribution else "no distribution"
        return f"plugin {self.name!r} ({dist}, {self.target})"


@dataclass(frozen=True)
class ComponentInfo:
    """One registered component class and the plugin that supplied it."""

    kind: str
    name: str
    cls: type
    plugin: PluginInfo

    @property
    def target(self) -> str:
        return f"{self.cls.__module__}:{self.cls.__qualname__}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "distribution": self.plugin.distribution,
            "version": self.plugin.version,
            "plugin": self.plugin.name,
            "module": self.cls.__module__,
            "class": self.cls.__qualname__,
        }


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that could not be used: it failed to import, to register, or its hook raised."""

    plugin: PluginInfo
    error: str

    def __str__(self) -> str:
        return f"{self.plugin.describe()} failed: {self.error}"


@dataclass
class Registry:
    """The registered components by kind and name, the plugins they came from, and the plugins that failed."""

    components: dict[str, dict[str, ComponentInfo]]
    plugins: list[PluginInfo] = field(default_factory=list)
    failures: list[PluginFailure] = field(default_factory=list)
    #: Metric name -> its class and plugin (kind ``"metric"``), from the hook ``tokembed_register_metrics``; the
    #: built-ins first (registered by the core itself), then in plugin order.
    metrics: dict[str, ComponentInfo] = field(default_factory=dict)
    _catalogue: dict[str, Any] | None = None

    def _check_kind(self, kind: str) -> None:
        if kind not in KINDS:
            raise UnknownComponentError(f"unknown kind {kind!r}; kinds are: {', '.join(KINDS)}")

    def names(self, kind: str) -> list[str]:
        """Sorted names of the registered components of ``kind``."""
        self._check_kind(kind)
        return sorted(self.components[kind])

    def info(self, kind: str, name: str) -> ComponentInfo:
        """The :class:`ComponentInfo` for ``kind``/``name``; see :meth:`get` for the error raised."""
        self._check_kind(kind)
        try:
            return self.components[kind][name]
        except (KeyError, TypeError):
            raise UnknownComponentError(self.unknown_message(kind, name)) from None

    def get(self, kind: str, name: str) -> type:
        """The component class registered as ``name`` for ``kind``.

        Raises
        ------
        UnknownComponentError
            Naming the available components of that kind, the closest match, and any plugin that failed to load.
        """
        return self.info(kind, name).cls

    def unknown_message(self, kind: str, name: Any) -> str:
        available = self.names(kind)
        msg = f"unknown {kind} {name!r}."
        close = difflib.get_close_matches(str(name), available, n=1, cutoff=0.6)
        if close:
            msg += f" Did you mean {close[0]!r}?"
        msg += f" Available: {', '.join(available) if available else '(none)'}"
        if self.failures:
            msg += "; plugins that failed to load: " + "; ".join(str(f) for f in self.failures)
        return msg

    def all(self, kind: str | None = None) -> list[ComponentInfo]:
        """Every registered component (of ``kind``), sorted by kind then name."""
        kinds = [kind] if kind else list(KINDS)
        out = []
        for k in kinds:
            self._check_kind(k)
            out.extend(self.components[k][n] for n in sorted(self.components[k]))
        return out

    def listed(self, kind: str | None = None) -> list[ComponentInfo]:
        """What ``tokembed plugins`` lists: the components (of ``kind``), sorted by kind then name, then the
        comparison metrics (kind ``"metric"``), sorted by name; ``kind="metric"`` lists the metrics only."""
        out = self.all(kind) if kind != "metric" else []
        if kind in (None, "metric"):
            out += [self.metrics[n] for n in sorted(self.metrics)]
        return out

    def metric(self, name: str) -> ComponentInfo:
        """The :class:`ComponentInfo` of metric ``name``.

        Raises
        ------
        UnknownComponentError
            Naming the registered metrics and the closest match.
        """
        if name in self.metrics:
            return self.metrics[name]
        available = list(self.metrics)
        close = difflib.get_close_matches(str(name), available, n=1, cutoff=0.6)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UnknownComponentError(f"unknown metric {name!r}.{hint} Available: {', '.join(available) or '(none)'}")

    @property
    def catalogue(self) -> dict[str, Any]:
        """The parsed ``registry.yaml``: built-in summaries and named presets."""
        if self._catalogue is None:
            self._catalogue = load_catalogue()
        return self._catalogue

    @property
    def presets(self) -> dict[str, dict[str, Any]]:
        """Named presets: name -> ``{"kind": ..., "type": ..., "params": {...}}``."""
        return dict(self.catalogue.get("presets") or {})


def load_catalogue() -> dict[str, Any]:
    """Read the ``registry.yaml`` shipped inside the package (``tokembed/registry.yaml``)."""
    from importlib import resources

    import yaml

    text = (resources.files("tokembed") / "registry.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    if not isinstance(data, dict):
        raise PluginError("tokembed/registry.yaml is broken: expected a mapping at the top")
    return data


def _normalize_dist(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _iter_entry_points() -> list[tuple[metadata.EntryPoint, str, str]]:
    """Entry points of our group with their distribution name and version, the same one seen twice collapsed."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for dist in metadata.distributions():
        try:
            dist_name = dist.metadata["Name"]
            eps = dist.entry_points
        except Exception:  # a broken .dist-info must not take the others down
            continue
        if not dist_name:
            continue
        for ep in eps:
            if ep.group != ENTRY_POINT_GROUP:
                continue
            key = (_normalize_dist(dist_name), ep.name, ep.value)
            if key in seen:  # an editable install listed twice, a lib64 -> lib link, ...
                continue
            seen.add(key)
            out.append((ep, dist_name, dist.version))
    out.sort(key=lambda t: (_normalize_dist(t[1]) != OWN_DISTRIBUTION, _normalize_dist(t[1]), t[0].name))
    return out


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def build_registry(
    autoload: bool | None = None,
    blocked: Iterable[str] = (),
    plugins: Iterable[Any] = (),
) -> Registry:
    """Discover plugins and build a :class:`Registry`.

    Parameters
    ----------
    autoload : bool, optional
        Load third-party entry points of group ``tokembed``. Default: true unless the environment variable
        ``TOKEMBED_DISABLE_PLUGIN_AUTOLOAD`` is set. The ``tokembed`` distribution's own built-ins always load.
    blocked : iterable of str
        Entry-point names (``char``) or distribution names (``tokembed-reverse``) not to load.
    plugins : iterable
        Extra plugins to register: importable module names or plugin objects/modules. ``TOKEMBED_PLUGINS``
        (comma-separated module names) adds more.

    Returns
    -------
    Registry

    Raises
    ------
    PluginError
        If two plugins register the same name for one kind (naming both distributions and targets), or a plugin
        implements a hook that does not exist (a misspelling). A plugin that fails to import or whose hook raises
        is recorded in ``Registry.failures`` instead, and the others still load.
    """
    if autoload is None:
        autoload = not _env_flag("TOKEMBED_DISABLE_PLUGIN_AUTOLOAD")
    blocked_set = {_normalize_dist(b) for b in blocked}
    known: set[str] = set()  # entry-point and distribution names seen, to tell a misspelt block
    pm = pluggy.PluginManager("tokembed")
    pm.add_hookspecs(hookspecs)

    infos: dict[str, PluginInfo] = {}  # pluggy plugin name -> info
    failures: list[PluginFailure] = []

    def register(obj: Any, key: str, info: PluginInfo) -> None:
        try:
            pm.register(obj, name=key)
        except Exception as exc:  # pluggy.PluginValidationError: wrong hook arguments, ...
            failures.append(PluginFailure(info, f"{type(exc).__name__}: {exc}"))
            return
        infos[key] = info

    # the core's own plugin: the built-in metrics, registered first and never blocked
    from ._version import __version__
    from .metrics import builtin as builtin_metrics

    register(builtin_metrics, "tokembed:builtin_metrics",
             PluginInfo("builtin_metrics", OWN_DISTRIBUTION, __version__, "tokembed.metrics.builtin"))

    for ep, dist_name, version in _iter_entry_points():
        own = _normalize_dist(dist_name) == OWN_DISTRIBUTION
        known.update((_normalize_dist(ep.name), _normalize_dist(dist_name)))
        if not own and not autoload:
            continue
        if _normalize_dist(ep.name) in blocked_set or _normalize_dist(dist_name) in blocked_set:
            continue
        info = PluginInfo(ep.name, dist_name, version, ep.value)
        key = f"{dist_name}:{ep.name}"
        if pm.has_plugin(key) or key in infos:
            continue
        try:
            obj = ep.load()
        except Exception as exc:
            failures.append(PluginFailure(info, f"import failed: {type(exc).__name__}: {exc}"))
            continue
        register(obj, key, info)

    extra = list(plugins)
    env_plugins = os.environ.get("TOKEMBED_PLUGINS", "")
    extra.extend(p.strip() for p in env_plugins.split(",") if p.strip())
    for item in extra:
        if isinstance(item, str):
            info = PluginInfo(item, None, None, item)
            known.add(_normalize_dist(item))
            if _normalize_dist(item) in blocked_set:
                continue
            try:
                obj = importlib.import_module(item)
            except Exception as exc:
                failures.append(PluginFailure(info, f"import failed: {type(exc).__name__}: {exc}"))
                continue
        else:
            obj = item
            label = getattr(item, "__name__", None) or type(item).__name__
            info = PluginInfo(label, None, None, label)
        key = f"explicit:{info.name}:{id(obj)}"
        if any(pm.get_plugin(k) is obj for k in list(infos)):
            continue
        register(obj, key, info)

    for name in sorted(blocked_set - known):
        warnings.warn(f"-p no:{name}: no installed plugin has that entry-point or distribution name, so nothing "
                      f"was blocked (`tokembed plugins` lists them)", stacklevel=2)

    # what pluggy's check_pending() refuses, found as data (hook name, plugin) rather than read from its message
    unknown: dict[str, list[str]] = {}
    for hook_name, caller in sorted(vars(pm.hook).items()):
        if hook_name.startswith("_") or caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if not impl.optionalhook:
                unknown.setdefault(impl.plugin_name, []).append(hook_name)
    if unknown:
        plugin_key, bad = next(iter(unknown.items()))
        who = infos[plugin_key].describe() if plugin_key in infos else f"plugin {plugin_key!r}"
        known = [name for name, _ in KINDS.values()] + [METRICS_HOOK]
        close = difflib.get_close_matches(bad[0], known, n=1, cutoff=0.5)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise PluginError(
            f"{who} implements a hook that does not exist: {', '.join(bad)}.{hint} Hooks: {', '.join(known)}. "
            "Fix the plugin, or block it with -p no:NAME"
        )
    pm.check_pending()  # nothing is left for it to find; kept so that a check pluggy adds later still runs

    def collect(hook_name: str, base: type, kind: str, table: dict[str, ComponentInfo]) -> None:
        """Call every implementation of a register hook on its own, so a plugin whose hook raises or returns
        something else than classes of ``base`` is recorded as a failure and the others still register."""
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            info = infos[impl.plugin_name]
            try:
                result = impl.function()
            except Exception as exc:
                failures.append(PluginFailure(info, f"{hook_name}() raised {type(exc).__name__}: {exc}"))
                continue
            problem = _check_result(result, base)
            if problem:
                failures.append(PluginFailure(info, f"{hook_name}() {problem}"))
                continue
            for cls in result:
                _add(table, ComponentInfo(kind, cls.name, cls, info))

    components: dict[str, dict[str, ComponentInfo]] = {k: {} for k in KINDS}
    for kind, (hook_name, base) in KINDS.items():
        collect(hook_name, base, kind, components[kind])

    from .metrics.base import Metric

    metrics: dict[str, ComponentInfo] = {}
    collect(METRICS_HOOK, Metric, "metric", metrics)  # in registration order: the built-ins first

    return Registry(components, plugins=list(infos.values()), failures=failures, metrics=metrics)


def _check_result(result: Any, base: type) -> str | None:
    if not isinstance(result, (list, tuple)):
        return f"must return a list of classes, returned {type(result).__name__}"
    for cls in result:
        if not (isinstance(cls, type) and issubclass(cls, base)):
            return f"returned {cls!r}, which is not a subclass of tokembed.{base.__name__}"
        if not isinstance(getattr(cls, "name", None), str) or not cls.name:
            return f"returned {cls.__qualname__}, which has no `name` (a non-empty str class attribute)"
    return None


def _add(table: dict[str, ComponentInfo], new: ComponentInfo) -> None:
    old = table.get(new.name)
    if old is None:
        table[new.name] = new
        return
    if old.cls is new.cls:
        return
    def who(c: ComponentInfo) -> str:
        dist = f"distribution {c.plugin.distribution} {c.plugin.version}" if c.plugin.distribution else "no distribution"
        return f"{dist} ({c.target}, plugin {c.plugin.name!r})"

    raise PluginError(
        f"{new.kind} name {new.name!r} is registered twice: by {who(old)} and by {who(new)}. "
        "Uninstall one of them, or block one with -p no:PLUGIN"
    )

"""The layering of docs/architecture.md, checked on every import in the package.

Imports are read with ``ast`` (function-local ones included), so a cycle or a
reach across layers cannot hide behind lazy imports or import order.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hindsight_lg"
FRAMEWORKS = ("langgraph", "langchain", "langchain_core")

# layer -> the modules of ours it may import (prefix match on dotted names).
ALLOWED: dict[str, tuple[str, ...]] = {
    "model": (),
    "errors": (),
    "text": (),
    "files": (),
    "telemetry": ("hindsight_lg.telemetry",),
    "storage": (
        "hindsight_lg.backends",
        "hindsight_lg.model",
        "hindsight_lg.errors",
        "hindsight_lg._text",
        "hindsight_lg._files",
        "hindsight_lg.telemetry",
    ),
    "embeddings": (
        "hindsight_lg.embeddings",
        "hindsight_lg.errors",
        "hindsight_lg._text",
        "hindsight_lg.telemetry",
    ),
    "engine": (
        "hindsight_lg.memory",
        "hindsight_lg.model",
        "hindsight_lg.errors",
        "hindsight_lg._text",
        "hindsight_lg._messages",
        "hindsight_lg._files",
        "hindsight_lg.telemetry",
        "hindsight_lg.embeddings",
        # the storage layer's protocol and factories, never a concrete backend
        "hindsight_lg.backends.base",
    ),
}
# The engine may name the backends package itself (its factories), exactly.
ENGINE_EXACT = ("hindsight_lg.backends",)


def layer_of(module: str) -> str:
    """The layer a module of ours belongs to."""
    rest = module.removeprefix("hindsight_lg.")
    head = rest.split(".")[0]
    return {
        "model": "model",
        "errors": "errors",
        "_text": "text",
        "_messages": "text",
        "_files": "files",
        "telemetry": "telemetry",
        "backends": "storage",
        "embeddings": "embeddings",
        "memory": "engine",
    }.get(head, "adapter")


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts).removesuffix(".__init__")
        found[name] = path
    return found


def imports(module: str, path: Path) -> list[tuple[str, str | None]]:
    """(imported module, imported name or None) for every import in a file."""
    is_package = path.name == "__init__.py"
    base = module if is_package else module.rpartition(".")[0]
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                anchor = base.rsplit(".", node.level - 1)[0] if node.level > 1 else base
                target = f"{anchor}.{target}".rstrip(".")
            out += [(target, a.name) for a in node.names]
    return out


def package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def violations() -> list[str]:
    """Every import that breaks a rule, as readable lines."""
    found = []
    mods = modules()
    for module, path in sorted(mods.items()):
        layer = layer_of(module)
        home = package_of(module, path)
        for target, name in imports(module, path):
            found += _check(module, layer, home, target, name, mods)
    return found


def _check(
    module: str,
    layer: str,
    home: str,
    target: str,
    name: str | None,
    mods: dict[str, Path],
) -> list[str]:
    problems = []
    full = f"{target}.{name}" if name and f"{target}.{name}" in mods else target
    if target.split(".")[0] in FRAMEWORKS and layer != "adapter":
        problems.append(f"{module} ({layer}) imports {target}")
    if not target.startswith("hindsight_lg"):
        return problems
    if layer in ALLOWED and not (
        any(full == a or full.startswith(a + ".") for a in ALLOWED[layer])
        or (layer == "engine" and full in ENGINE_EXACT)
    ):
        problems.append(f"{module} ({layer}) imports {full}")
    private = [i for i, part in enumerate(full.split(".")) if part.startswith("_")]
    if private and not part_is_dunder(full, private[0]):
        owner = ".".join(full.split(".")[: private[0]])
        if not (home == owner or home.startswith(owner + ".")):
            problems.append(f"{module} imports {full}, private to {owner}")
    if name and name.startswith("_") and not name.startswith("__"):
        owner = (
            target
            if target in mods and mods[target].name == "__init__.py"
            else (target.rpartition(".")[0])
        )
        if not (home == owner or home.startswith(owner + ".")):
            problems.append(f"{module} imports private {name} from {target}")
    return problems


def part_is_dunder(full: str, index: int) -> bool:
    part = full.split(".")[index]
    return part.startswith("__") and part.endswith("__")


def test_every_import_respects_the_layers() -> None:
    """Model at the bottom, storage below the engine, frameworks only in adapters."""
    assert [] == violations()


def test_the_checker_catches_an_engine_reaching_into_a_concrete_backend() -> None:
    """The rules fire on the imports this architecture forbids."""
    mods = {"hindsight_lg.backends.milvus": Path("x")}
    assert _check(
        "hindsight_lg.memory.engine",
        "engine",
        "hindsight_lg.memory",
        "hindsight_lg.backends.milvus",
        "MilvusBackend",
        mods,
    )
    assert _check(
        "hindsight_lg.backends.base",
        "storage",
        "hindsight_lg.backends",
        "hindsight_lg.memory.engine",
        "HindsightMemory",
        mods,
    )
    assert _check(
        "hindsight_lg.memory.engine",
        "engine",
        "hindsight_lg.memory",
        "langgraph.graph",
        "StateGraph",
        mods,
    )
    assert _check(
        "hindsight_lg.checkpointers._base",
        "adapter",
        "hindsight_lg.checkpointers",
        "hindsight_lg.nodes._run",
        "Identity",
        mods,
    )
    assert _check(
        "hindsight_lg.telemetry",
        "telemetry",
        "hindsight_lg.telemetry",
        "hindsight_lg.model",
        "Kind",
        mods,
    )


# The engine's rooms, bottom first: room -> the other rooms it may import.
# ``requests`` is what a capture and a recall ask for, checked at the engine's
# door; durability stores and replays it, so it may read it (and nothing else of
# the engine: it gets the write path as a callable). ``plumbing`` is the
# engine's own machinery (locks, coalescing, spans). ``engine`` is engine.py,
# its private helpers beside it and the package's ``__init__``: the top.
ENGINE_ROOMS: dict[str, frozenset[str]] = {
    "policy": frozenset(),
    "plumbing": frozenset({"policy"}),
    "language": frozenset(),
    "requests": frozenset({"language"}),
    "durability": frozenset({"requests"}),
    # Capture stages its writes in the batches the wiring hands it
    # (durability.batches): it imports nothing of durability.
    "capture": frozenset({"language", "requests", "policy", "plumbing"}),
    "recall": frozenset({"language", "requests", "policy", "plumbing"}),
    "lifecycle": frozenset(
        {"capture", "recall", "language", "requests", "policy", "plumbing"}
    ),
    "jobs": frozenset(
        {
            "lifecycle",
            "capture",
            "recall",
            "language",
            "durability",
            "requests",
            "policy",
            "plumbing",
        }
    ),
}
ROOM_FOLDERS = ("language", "durability", "capture", "recall", "lifecycle", "jobs")
PLUMBING = ("_locks", "_shared", "_coalesce", "_traced", "_pending")


def room_of(module: str) -> str | None:
    """The engine room of a module (``None`` outside the engine)."""
    parts = module.split(".")
    if parts[:2] != ["hindsight_lg", "memory"]:
        return None
    name = parts[2] if len(parts) > 2 else ""
    if name in ROOM_FOLDERS or name in ("policy", "requests"):
        return name
    return "plumbing" if name in PLUMBING else "engine"


def targets() -> list[tuple[str, str]]:
    """(importing module, imported module of ours) for every import in the package.

    ``from hindsight_lg import testing`` counts as importing ``hindsight_lg.testing``.
    """
    mods, found = modules(), []
    for module, path in sorted(mods.items()):
        for target, name in imports(module, path):
            if target.startswith("hindsight_lg"):
                full = f"{target}.{name}" if f"{target}.{name}" in mods else target
                found.append((module, full))
    return found


def within(module: str, package: str) -> bool:
    """``module`` is ``package`` or one of its submodules."""
    return module == package or module.startswith(package + ".")


def test_the_engine_rooms_import_downward() -> None:
    """Language at the bottom, capture and recall above it, lifecycle, jobs, engine.py.

    Durability imports only itself and the request it stores (besides the
    layers below the engine); recall never imports capture; no room imports
    engine.py: the jobs are typed against an engine protocol.
    """
    assert [] == [
        f"{module} ({here}) imports {target} ({there})"
        for module, target in targets()
        if (here := room_of(module)) not in (None, "engine")
        and (there := room_of(target)) is not None
        and there != here
        and there not in ENGINE_ROOMS[here]
    ]


def test_every_engine_folder_is_a_room() -> None:
    """A new folder in the engine takes a place in the table above."""
    folders = {p.parent.name for p in (PACKAGE / "memory").glob("*/__init__.py")}
    assert sorted(ROOM_FOLDERS) == sorted(folders)


def untyped_engine_handles(path: Path) -> list[str]:
    """Parameters, fields and attributes named ``memory``/``engine`` typed ``Any``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        named: list[tuple[str, ast.expr | None]] = []
        if isinstance(node, ast.arg):
            named.append((node.arg, node.annotation))
        elif isinstance(node, ast.AnnAssign):
            target = node.target
            name = getattr(target, "id", None) or getattr(target, "attr", "")
            named.append((name, node.annotation))
        found += [
            f"{name}: Any (line {node.lineno})"
            for name, note in named
            if name.lstrip("_") in ("memory", "engine")
            and note is not None
            and ast.unparse(note).strip("'\"") in ("Any", "typing.Any")
        ]
    return found


def test_the_engine_has_no_untyped_engine_handles() -> None:
    """Inside the engine, whoever holds the engine names its type or protocol."""
    assert [] == [
        f"{module}: {handle}"
        for module, path in sorted(modules().items())
        if room_of(module) is not None
        for handle in untyped_engine_handles(path)
    ]


def test_only_the_test_doubles_import_testing() -> None:
    """Production code runs on real parts: nothing outside ``testing/`` imports it.

    The offline chat model the templates and the server use lives in
    ``hindsight_lg.chat`` and the hashing embedder in ``hindsight_lg.embeddings``;
    ``hindsight_lg.testing`` re-exports both for tests.
    """
    testing = "hindsight_lg.testing"
    assert [] == [
        f"{module} imports {target}"
        for module, target in targets()
        if within(target, testing) and not within(module, testing)
    ]


def test_the_cli_is_a_leaf() -> None:
    """Nothing but the CLI imports the CLI (benchmarks time it in a subprocess)."""
    cli = ("hindsight_lg.cli", "hindsight_lg._commands")
    assert [] == [
        f"{module} imports {target}"
        for module, target in targets()
        if any(within(target, c) for c in cli)
        and not any(within(module, c) for c in cli)
    ]


# What the adapters see of the engine, storage and embedding layers: these
# modules, each with a sorted ``__all__``, and nothing deeper.
PUBLIC = (
    "hindsight_lg.backends",
    "hindsight_lg.backends.milvus",
    "hindsight_lg.embeddings",
    "hindsight_lg.memory",
    "hindsight_lg.memory.language",
)


def test_adapters_import_the_layers_below_through_public_modules() -> None:
    """Nodes, savers, store, panel, CLI, templates, bench reach no engine room.

    ``hindsight_lg.testing`` is exempt: the backend contract suite and the
    test doubles are written against the storage layer itself.
    """
    below = ("engine", "storage", "embeddings")
    assert [] == [
        f"{module} imports {target}"
        for module, target in targets()
        if layer_of(module) == "adapter"
        and not within(module, "hindsight_lg.testing")
        and layer_of(target) in below
        and target not in PUBLIC
    ]


# An adapter makes the store's calls through the engine (``memory.query``,
# ``memory.count``, ``memory.get_many``, ...), which checks the namespace, traces
# the call and takes the engine's locks; of ``memory.backend`` it reads only the
# capabilities (a name to print).
BACKEND_CALLERS = {  # module -> why it may reach the backend itself
    "hindsight_lg.bench.scale": "bulk_load writes 100k rows without capture's work",
}


def backend_uses(path: Path) -> list[str]:
    """What a file does with a ``.backend`` attribute, other than its capabilities."""
    tree = ast.parse(path.read_text())
    then = {
        id(node.value): node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
    }
    return [
        then.get(id(node), "backend")
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "backend"
        and then.get(id(node)) != "capabilities"
    ]


def test_adapters_read_and_write_through_the_engine() -> None:
    """No adapter calls the engine's backend directly (no span, no lock)."""
    assert [] == [
        f"{module} uses .backend ({use})"
        for module, path in sorted(modules().items())
        if layer_of(module) == "adapter"
        and not within(module, "hindsight_lg.testing")
        and module not in BACKEND_CALLERS
        for use in backend_uses(path)
    ]


def test_public_modules_are_checked_as_public() -> None:
    """Each of them has its ``__all__`` checked by ``tests/test_public_api.py``."""
    from tests.test_public_api import MODULES

    assert [] == [name for name in PUBLIC if name not in MODULES]


# State a process keeps has an owner: the store's handle (backend, read cache,
# locks, spool, group commit), the engine (what its adapters keep per engine,
# ``HindsightMemory.adapter_state``), or an adapter object. A module-level
# mutable map filled at run time is a registry nobody owns: it outlives every
# engine and is keyed its own way. These are the ones that stay, and why.
REGISTRIES = {  # "module.NAME" -> why it is module-level
    "hindsight_lg.backends.handle._STORES": "the one lookup of store handles: "
    "by backend object (weak) and by Lite file + prefix",
    "hindsight_lg.backends.milvus._lite_server._FILES": "one per Lite file, below "
    "any handle: backends on two prefixes of a file share its server and ledger lock",
    "hindsight_lg.identity._THREADS": "a thread's user, per checkpointer (weak): "
    "thread ids belong to the LangGraph saver, which the library does not own, "
    "and find_identity(saver=...) is public with no engine to hold it; per "
    "engine, a second engine on the saver would lose a user taken from the "
    "run's context (in no checkpoint), and a map set on the saver (it holds "
    "a lock) would break a copy or pickle of the user's saver",
    "hindsight_lg.identity._WARNED": "a log rate limit (warn once per thread), "
    "bounded; nothing reads it back",
    "hindsight_lg.checkpointers._base._VARIANTS": "a cache of classes built once "
    "per saver class and capability set (immutable values)",
    "hindsight_lg.memory.recall.calibration._MEASURED": "a memo of a measurement "
    "per embedding model id (the same value every time)",
}
_CONTAINERS = {"dict", "set", "list", "OrderedDict", "defaultdict", "deque"}
_WEAK = {"WeakKeyDictionary", "WeakValueDictionary", "WeakSet"}


def _called(node: ast.expr) -> str:
    if not isinstance(node, ast.Call):
        return ""
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _stateful_classes(tree: ast.Module) -> set[str]:
    """Classes whose ``__init__`` sets a container or a lock on ``self``."""
    found = set()
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for node in ast.walk(cls):
            if (
                isinstance(node, (ast.Assign, ast.AnnAssign))
                and node.value is not None
                and (
                    _empty_container(node.value)
                    or _called(node.value) in {"Lock", "RLock", *_WEAK}
                )
            ):
                found.add(cls.name)
    return found


def _empty_container(value: ast.expr) -> bool:
    if isinstance(value, ast.Dict):
        return not value.keys
    if isinstance(value, (ast.List, ast.Set)):
        return not value.elts
    if not isinstance(value, ast.Call):
        return False
    name = _called(value)
    return name in _WEAK or (name in _CONTAINERS and not value.args)


def module_registries(path: Path) -> list[str]:
    """Names a module binds at import to an empty container or a registry object.

    An empty map, set or list (or any weak container) made at import exists to
    be filled later; so does an instance of a class of the module that keeps a
    container or a lock. Constant tables (literals with entries) are not state.
    """
    tree = ast.parse(path.read_text())
    stateful = _stateful_classes(tree)
    body = list(tree.body)
    for node in tree.body:  # module-level if/try blocks bind at import too
        if isinstance(node, (ast.If, ast.Try)):
            body += [*node.body, *node.orelse]
    found = []
    for node in body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if _empty_container(value) or _called(value) in stateful:
            found += [t.id for t in targets if isinstance(t, ast.Name)]
    return found


def test_no_module_keeps_an_ownerless_registry() -> None:
    """Process state belongs to a handle, an engine or an adapter object."""
    found = {
        f"{module}.{name}"
        for module, path in sorted(modules().items())
        for name in module_registries(path)
    }
    assert [] == sorted(found - set(REGISTRIES))
    assert [] == sorted(set(REGISTRIES) - found)  # the allow-list has no dead entry


def test_the_registry_check_catches_a_new_map(tmp_path: Path) -> None:
    """A weak map, an empty dict and a registry object are each caught."""
    source = tmp_path / "sample.py"
    source.write_text(
        "import threading, weakref\n"
        "TABLE = {'a': 1}\n"
        "_BY_ENGINE = weakref.WeakKeyDictionary()\n"
        "_SEEN: dict[str, int] = {}\n"
        "class _Box:\n"
        "    def __init__(self):\n"
        "        self._lock = threading.Lock()\n"
        "_BOX = _Box()\n"
    )
    assert ["_BY_ENGINE", "_SEEN", "_BOX"] == module_registries(source)


# -- the thin engine and its wrappers ------------------------------------------


def test_constructors_store_what_they_are_given(tmp_path: Path) -> None:
    """``HindsightMemory(...)``, ``MilvusBackend(uri)`` and ``Spool(path)`` do no I/O.

    The engine's parts open at its first use (``memory/_opening.py``), a
    Milvus backend connects at ``open()`` or its first call, a spool makes its
    folder and reads its file at ``open()`` or first use.
    """
    from hindsight_lg.backends import ForwardingBackend, InMemoryBackend
    from hindsight_lg.backends.milvus import MilvusBackend
    from hindsight_lg.embeddings import HashingEmbedder
    from hindsight_lg.memory import HindsightMemory, Spool

    class Untouchable(ForwardingBackend):
        def _forward(self, name: str, /, *args: object, **kwargs: object) -> object:
            raise AssertionError(f"the constructor called {name}()")

    spool = tmp_path / "engine" / "s.spool"
    memory = HindsightMemory(
        Untouchable(InMemoryBackend()), HashingEmbedder(), spool=spool
    )
    MilvusBackend(str(tmp_path / "lite" / "m.db"))
    Spool(tmp_path / "spool" / "s.spool")
    assert [] == sorted(p.name for p in tmp_path.iterdir())
    memory.close()  # before the first use: opens nothing either
    assert [] == sorted(p.name for p in tmp_path.iterdir())


# Classes that answer unknown attributes themselves, and why. A wrapper over a
# backend is not among them: it derives from ForwardingBackend, which has the
# whole protocol, so no wrapper forwards by name or copies a list of methods.
GETATTR_CLASSES = {
    "hindsight_lg.checkpointers._base.BaseHindsightSaver": "the bridging saver is the inner "
    "LangGraph saver to its callers (setup(), conn, ...), whatever saver it is",
}


def getattr_classes(module: str, path: Path) -> list[str]:
    """Classes of a module that define ``__getattr__`` (in an ``if`` block too)."""
    found = []
    for cls in ast.walk(ast.parse(path.read_text())):
        if isinstance(cls, ast.ClassDef) and any(
            isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
            for node in ast.walk(cls)
        ):
            found.append(f"{module}.{cls.name}")
    return found


def test_wrappers_over_a_backend_derive_from_the_forwarding_base() -> None:
    """No class forwards unknown attributes but the listed ones.

    And every class of ours built over an ``inner`` backend is a
    ``ForwardingBackend``.
    """
    from hindsight_lg.backends import ForwardingBackend

    found = {c for m, p in sorted(modules().items()) for c in getattr_classes(m, p)}
    assert [] == sorted(found - set(GETATTR_CLASSES))
    assert [] == sorted(set(GETATTR_CLASSES) - found)
    wrappers = []
    for module, path in sorted(modules().items()):
        for cls in ast.walk(ast.parse(path.read_text())):
            init = isinstance(cls, ast.ClassDef) and next(
                (n for n in cls.body if getattr(n, "name", "") == "__init__"), None
            )
            if isinstance(init, ast.FunctionDef) and any(
                a.arg == "inner" and "MemoryBackend" in ast.unparse(a.annotation or a)
                for a in init.args.args
            ):
                assert isinstance(cls, ast.ClassDef)
                wrappers.append(getattr(importlib.import_module(module), cls.name))
    assert len(wrappers) >= 5  # cache, traced, draining, staged, bench's timing
    assert [] == [w for w in wrappers if not issubclass(w, ForwardingBackend)]


# Async twins the engine spells out, and why; every other one is
# ``aname = in_thread(name)``.
EXPLICIT_TWINS = {
    "arecall": "runs on the engine's own caller pool, not the loop's executor",
    "afrom_uri": "a classmethod: opens memory in a worker thread",
}


def test_the_engines_async_twins_are_one_liners() -> None:
    """``aforget`` is ``forget`` in a thread, for every twin but the listed ones."""
    from hindsight_lg.memory import HindsightMemory

    twins = {
        name: getattr(HindsightMemory, name)
        for name in dir(HindsightMemory)
        if name.startswith("a") and hasattr(HindsightMemory, name[1:])
    }
    assert len(twins) > 10
    assert [] == [
        name
        for name, twin in sorted(twins.items())
        if name not in EXPLICIT_TWINS
        and getattr(twin, "__wrapped__", None) is not getattr(HindsightMemory, name[1:])
    ]
    assert set(EXPLICIT_TWINS) <= set(twins)


def names_used(path: Path) -> set[str]:
    """Every name and attribute a module refers to."""
    return {
        node.id if isinstance(node, ast.Name) else node.attr
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.Name, ast.Attribute))
    }


def test_one_door_checks_captures_and_recalls() -> None:
    """Requests are checked by ``memory/requests.py`` and nowhere else.

    The event-time validator is called there only (its module defines it), so
    capture, submit and the spool's replay cannot disagree on what a time is.
    """
    door = "hindsight_lg.memory.requests"
    home = "hindsight_lg.memory.language.timeparse"
    assert [] == [
        module
        for module, path in sorted(modules().items())
        if module not in (door, home) and "check_event_time" in names_used(path)
    ]


def test_the_engines_parts_see_the_traced_store() -> None:
    """Searcher and lifecycle call the store through the span-per-call view."""
    from hindsight_lg.backends import InMemoryBackend
    from hindsight_lg.embeddings import HashingEmbedder
    from hindsight_lg.memory import HindsightMemory
    from hindsight_lg.memory._traced import TracedBackend

    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as memory:
        views = [memory._parts().searcher.backend, memory.lifecycle.backend]
        assert [] == [v for v in views if not isinstance(v, TracedBackend)]


MAX_LINES = 450  # most modules stay near half of it


def test_no_module_is_longer_than_450_lines() -> None:
    """A module that outgrows 450 lines holds two things: split it by what they are."""
    sizes = {m: len(p.read_text().splitlines()) for m, p in modules().items()}
    assert {} == {m: n for m, n in sorted(sizes.items()) if n > MAX_LINES}


@pytest.mark.parametrize("name", sorted(modules()))
def test_any_module_imports_first(name: str) -> None:
    """Each module imports on its own, in a fresh interpreter: no order-only cycles."""
    if name.startswith(("hindsight_lg.nodes.middleware", "hindsight_lg.bench")):
        pytest.importorskip("langchain" if "middleware" in name else "matplotlib")
    done = subprocess.run(
        [sys.executable, "-c", f"import {name}"], capture_output=True, text=True
    )
    assert (0, "") == (done.returncode, done.stderr)


def test_the_package_imports_without_torch_or_flagembedding() -> None:
    """``import hindsight_lg`` loads neither torch nor FlagEmbedding."""
    code = (
        "import sys, hindsight_lg; "
        "print(sorted(m for m in ('torch', 'FlagEmbedding') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "[]" == done.stdout.strip()


def test_public_names_import() -> None:
    """The paths users write keep working."""
    for path, name in [
        ("hindsight_lg", "HindsightMemory"),
        ("hindsight_lg.nodes", "add_hindsight"),
        ("hindsight_lg.checkpointers", "HindsightSaver"),
        ("hindsight_lg.store", "HindsightStore"),
        ("hindsight_lg.backends.milvus", "MilvusBackend"),
    ]:
        assert hasattr(importlib.import_module(path), name)


def test_the_engine_reaches_its_parts_without_getattr() -> None:
    """No class of the engine's defines ``__getattr__``: "go to definition"
    follows every call from a public method to the part that does it."""
    from hindsight_lg.memory import HindsightMemory

    hooks = {"__getattr__", "__getattribute__"}
    assert [] == [
        cls.__qualname__
        for cls in HindsightMemory.__mro__
        if cls is not object and hooks & set(vars(cls))
    ]


# The engine's parts: each is constructed at one place in the package,
# memory/_wiring.py, from the parts it needs.
PARTS = (
    "Batches",
    "CapturePath",
    "CaptureWorker",
    "DrainingBackend",
    "EngineParts",
    "LazyWriter",
    "Lifecycle",
    "Placer",
    "Pools",
    "RecallPath",
    "Searcher",
    "SpooledCapture",
    "Writer",
)


def construction_sites(name: str) -> list[str]:
    """Where the package calls ``name(...)``, as ``module:line``."""
    return [
        f"{module}:{node.lineno}"
        for module, path in sorted(modules().items())
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and name == getattr(node.func, "id", getattr(node.func, "attr", None))
    ]


@pytest.mark.parametrize("part", PARTS)
def test_each_part_is_built_in_one_place(part: str) -> None:
    """An engine part has one construction site, in the wiring."""
    sites = construction_sites(part)
    assert 1 == len(sites), sites
    assert sites[0].startswith("hindsight_lg.memory._wiring:")


def test_the_wiring_sets_no_collaborator_after_construction() -> None:
    """``_wiring`` hands each part its collaborators in its constructor: it
    assigns no attribute of an object it built (``writer.sink = ...``)."""
    tree = ast.parse(modules()["hindsight_lg.memory._wiring"].read_text())
    late = [
        f"{ast.unparse(target)} (line {node.lineno})"
        for node in ast.walk(tree)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute)
        and not (isinstance(target.value, ast.Name) and target.value.id == "self")
    ]
    assert [] == late


def test_capture_runs_one_way() -> None:
    """Capture's layers import downwards only: durability (spool, worker,
    group commit) imports neither the capture pipeline nor the engine's root,
    and the capture pipeline imports neither durability (the wiring hands it
    its batches) nor the engine's root."""
    root = tuple(
        f"hindsight_lg.memory.{name}"
        for name in (
            "engine",
            "_opening",
            "_parts",
            "_wiring",
            "_read",
            "_write",
            "_read_methods",
            "_lifecycle_methods",
            "_slots",
        )
    )
    found = []
    for module, path in sorted(modules().items()):
        if module.startswith("hindsight_lg.memory.durability"):
            banned = (*root, "hindsight_lg.memory.capture")
        elif module.startswith("hindsight_lg.memory.capture"):
            banned = (*root, "hindsight_lg.memory.durability")
        else:
            continue
        found += [
            f"{module} -> {target}"
            for target, _ in imports(module, path)
            if target.startswith(banned)
        ]
    assert [] == found

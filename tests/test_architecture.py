"""The house's shape, checked on the source with the standard library's ``ast``: imports point one way (down
the rooms' order of docs/interfaces.md, "Layers", never back up, and no import loops, the developer tools
included; annotation-only imports counted too), no room imports what docs/interfaces.md ("Rooms") says it knows
nothing of, and modules stay small."""

from __future__ import annotations

import ast
import graphlib
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lichessbot"
#: Lines a module may have (the house's "about 400").
MAX_LINES = 420


def _tree(root: Path) -> dict[str, Path]:
    """Every module under ``root`` (a top-level package of the repository), by its dotted name."""
    mods = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return mods


def _modules() -> dict[str, Path]:
    """Every module of the package, and the Rust core as ``lichessbot._core`` (its stub)."""
    return {"lichessbot._core": PACKAGE / "_core.pyi", **_tree(PACKAGE)}


def import_graph(mods: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """module -> the project modules it imports anywhere in its file (top level, functions, TYPE_CHECKING);
    ``mods``: the modules to read (default the package's). ``from package import submodule`` is an edge to the
    submodule, not to the package."""
    mods = _modules() if mods is None else mods
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            graph[name].update(t for t in targets if t in mods and t != name)
    return graph


def import_loop(graph: dict[str, set[str]]) -> list[str]:
    """One import loop (its modules, the first repeated at the end), or [] when there is none: the
    standard library's topological sort (``graphlib``) finds it."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        return list(err.args[1])
    return []


def test_a_loop_in_a_graph_is_found():
    assert set(import_loop({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})) == {"a", "b", "c"}
    assert import_loop({"a": {"b"}, "b": set()}) == []


def test_no_import_loops_in_the_package():
    graph = import_graph()
    assert "lichessbot.neural.registry" in graph["lichessbot.thinker.wiring"]  # the graph sees real edges
    assert import_loop(graph) == []


DEVTOOLS = PACKAGE.parent / "devtools"


def whole_graph() -> dict[str, set[str]]:
    """The import graph of the package, the developer tools and the test tree together."""
    return import_graph({**_modules(), **_tree(DEVTOOLS), **_tree(Path(__file__).resolve().parent)})


def test_the_developer_tools_import_down_only_and_without_a_loop():
    """The rooms' order above the package: the tests use the developer tools (the test server, devtools/lila), the
    developer tools use the package; never the other way round, and no loop among the tools either."""
    graph = whole_graph()
    assert "devtools.lila.server" in graph["tests.conftest"]  # the graph sees real edges
    up = {(a, b) for a, targets in graph.items() for b in targets
          if (a.startswith("devtools") and b.startswith("tests"))
          or (a.startswith("lichessbot") and b.split(".")[0] in ("devtools", "tests"))}
    assert up == set()
    tools = {m: {t for t in ts if not t.startswith("tests")} for m, ts in graph.items() if not m.startswith("tests")}
    assert import_loop(tools) == []


RUST = PACKAGE.parent / "rust"


def rust_graph() -> dict[str, set[str]]:
    """Each module of the Rust crates (``core/search``, ``py/lib``) -> the modules of its own crate it uses:
    ``crate::m`` in code (comments, doc links and the ``#[cfg(test)] mod tests`` at a file's end left out)."""
    graph: dict[str, set[str]] = {}
    for crate in ("core", "py"):
        src = RUST / crate / "src"
        for path in sorted(src.glob("*.rs")):
            code = path.read_text(encoding="utf-8").split("#[cfg(test)]")[0]
            code = re.sub(r"//[^\n]*", "", code)
            used = set(re.findall(r"\bcrate::([a-z_][a-z0-9_]*)", code)) - {path.stem}
            graph[f"{crate}/{path.stem}"] = {f"{crate}/{m}" for m in used if (src / f"{m}.rs").exists()}
    return graph


def test_no_module_loop_in_the_rust_crates():
    graph = rust_graph()
    assert "core/tree" in graph["core/search"] and "core/search" in graph["core/backup"]  # real edges seen
    assert import_loop(graph) == []


#: The layers' list of the docs (docs/interfaces.md, "Layers"): the test enforces the order the docs state.
DOC = PACKAGE.parent / "docs" / "interfaces.md"


def layers_of(text: str) -> tuple[tuple[str, ...], ...]:
    """The rooms of the docs' layers list, top first: the `names` before the dash of each numbered line
    between the ``<!-- layers: begin`` and ``<!-- layers: end -->`` markers."""
    body = text[text.index("<!-- layers: begin"):text.index("<!-- layers: end -->")]
    layers = []
    for line in body.splitlines()[1:]:
        m = re.match(r"\d+\.\s+(.*?)\s+—", line)
        if m:
            layers.append(tuple(re.findall(r"`([^`]+)`", m.group(1))))
    return tuple(layers)


#: The rooms from the top (the command) down (errors): a module may import its own room and the rooms below it,
#: never one above it nor a peer in its own layer. The data flows lichess -> game -> thinker -> search ->
#: (evaluation service, timeman), and each room's "knows nothing of" puts it below what it must not see.
LAYERS: tuple[tuple[str, ...], ...] = layers_of(DOC.read_text(encoding="utf-8"))

#: Modules that are a room of their own where they stand: the bot's package itself (a docstring; its rooms
#: are one level down) counts as the package.
MODULE_ROOMS: dict[str, str] = {"lichessbot.bot": "lichessbot"}

#: docs/interfaces.md's "knows nothing of" (its "Rooms" table), for what the order alone allows: room -> rooms (or
#: modules) it never imports.
KNOWS_NOTHING_OF: dict[str, set[str]] = {
    "errors": {"config", "lichess", "score"},
    "config": {"lichess"},
    "lichess": {"config", "neural", "search", "_core", "timeman", "book", "tablebase", "strength", "thinker"},
    "neural": {"lichess", "timeman", "match"},
    "_core": {"lichess", "match"},
    "search": {"lichess", "timeman"},
    "timeman": {"_core", "lichessbot.search.searcher", "lichessbot.search.handle"},
    "book": {"search", "lichess"},
    "tablebase": {"search", "lichess"},
    "gaviota": {"search", "lichess"},
    "status": {"search", "_core", "neural"},
    "online": {"search", "_core", "neural"},
    "thinker": {"lichess"},
    "uci": {"lichess"},
    # docs/interfaces.md: the embedded lichess knows nothing of the bot's internals (every room of the bot, its engine)
    "local": {"thinker", "status", "online", "strength", "timeman", "search", "tablebase", "book", "neural", "_core",
              "match", "score", "config", "lichess"},
    **{f"bot.{room}": {"_core"} for room in ("service", "setup", "arenas", "matchmaking", "games",
                                                              "chat", "challenges")},
}

#: Arrows back up that exist today, each with the work that removes it (issue 30's bot wing). An arrow listed
#: here that no longer exists fails the test: take it off the list.
KNOWN_BACK_ARROWS: dict[tuple[str, str], str] = {}


def room_of(module: str) -> str:
    """``lichessbot.search.searcher`` -> ``search``, ``lichessbot.bot.games.shell`` -> ``bot.games`` (the bot's
    rooms are one level down), ``lichessbot.score`` -> ``score``, the package -> ``lichessbot``."""
    if module in MODULE_ROOMS:
        return MODULE_ROOMS[module]
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "bot":
        return f"bot.{parts[2]}"
    return parts[1] if len(parts) > 1 else parts[0]


def back_arrows(graph: dict[str, set[str]]) -> dict[tuple[str, str], str]:
    """Imports that go against :data:`LAYERS` or :data:`KNOWS_NOTHING_OF`: (importer, imported) -> why."""
    rank = {room: i for i, layer in enumerate(LAYERS) for room in layer}
    bad = {}
    for src, targets in graph.items():
        a = room_of(src)
        for dst in targets:
            b = room_of(dst)
            if a == b:
                continue
            if a not in rank or b not in rank:
                bad[(src, dst)] = f"room {a if a not in rank else b!r} is not in LAYERS"
            elif rank[b] <= rank[a]:
                bad[(src, dst)] = f"{a} imports {b}, which is {'beside' if rank[a] == rank[b] else 'above'} it"
            elif KNOWS_NOTHING_OF.get(a, set()) & {b, dst}:
                bad[(src, dst)] = f"{a} knows nothing of {b} (docs/interfaces.md)"
    return bad


def test_the_docs_list_every_room_once_and_no_room_that_is_not_there():
    assert layers_of("x\n<!-- layers: begin -->\n1. `a`, `b` — two\n2. `c` — one\n<!-- layers: end -->\n") == (
        ("a", "b"), ("c",))
    listed = [room for layer in LAYERS for room in layer]
    assert len(listed) == len(set(listed)) and LAYERS[0] == ("__main__",) and ("thinker",) in LAYERS
    rooms = {room_of(m) for m in _modules()}
    assert rooms - set(listed) == set(), "rooms missing from docs/interfaces.md's layers"
    assert set(listed) - rooms == set(), "rooms listed in docs/interfaces.md that do not exist"


def test_back_arrows_are_found():
    graph = {"lichessbot.search.searcher": {"lichessbot.bot.games.shell", "lichessbot.config",
                                            "lichessbot.lichess.client"},
             "lichessbot.timeman.manager": {"lichessbot.search", "lichessbot.search.searcher"},
             "lichessbot.book": {"lichessbot.tablebase"}, "lichessbot.config": set()}
    assert set(back_arrows(graph)) == {("lichessbot.search.searcher", "lichessbot.bot.games.shell"),
                                       ("lichessbot.search.searcher", "lichessbot.lichess.client"),
                                       ("lichessbot.timeman.manager", "lichessbot.search.searcher"),
                                       ("lichessbot.book", "lichessbot.tablebase")}


def test_imports_point_down_the_rooms():
    graph = import_graph()
    assert "lichessbot._core" in graph["lichessbot.search.searcher"]  # the core is a room of the graph
    found = back_arrows(graph)
    assert {k: v for k, v in found.items() if k not in KNOWN_BACK_ARROWS} == {}
    assert [k for k in KNOWN_BACK_ARROWS if k not in found] == [], "gone: take them off KNOWN_BACK_ARROWS"


def test_no_module_is_over_the_size_limit():
    sizes = {str(p.relative_to(PACKAGE.parent)): len(p.read_text(encoding="utf-8").splitlines())
             for p in PACKAGE.rglob("*.py")}
    assert {p: n for p, n in sizes.items() if n > MAX_LINES} == {}


TESTS = Path(__file__).resolve().parent


def _fixtures_and_skips() -> tuple[dict[str, list[str]], list[str]]:
    """Every fixture of the test tree (name -> the files defining it) and every ``importorskip`` of our own
    package (file: module)."""
    fixtures: dict[str, list[str]] = {}
    skips: list[str] = []
    for path in sorted(TESTS.rglob("*.py")):
        rel = str(path.relative_to(TESTS.parent))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any("fixture" in ast.unparse(d) for d in node.decorator_list):
                fixtures.setdefault(node.name, []).append(rel)
            if (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("importorskip") and node.args
                    and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("lichessbot")):
                skips.append(f"{rel}: {node.args[0].value}")
    return fixtures, skips


def test_each_fixture_is_defined_once_and_no_module_of_ours_is_skipped():
    fixtures, skips = _fixtures_and_skips()
    assert "engine" in fixtures and "server" in fixtures  # the walk sees the conftest files
    assert {name: files for name, files in fixtures.items() if len(files) > 1} == {}
    assert skips == []  # our own code is imported, never skipped: a missing module is a failure

"""The shape of the package: no import circles between calsim's modules, no import running up the layers
docs/architecture.md draws, no module over 600 lines, and no type switch on rule kinds outside them (they
implement the protocol of ``calsim/rules/kind.py``).

The import graph is read from the source with :mod:`ast` (nothing is
imported), so a circle hidden in a function body or under ``TYPE_CHECKING``
counts as much as one at module level: each is a layering mistake that only
happens to work at run time because of the order in which modules load.

How an import statement becomes edges (``S`` is the importing module):

* ``import a.b.c`` -> ``a.b.c``; ``from .m import name`` -> ``m``;
  ``from . import x`` -> ``x`` when ``x`` is a submodule, else the package
  itself (its ``__init__``: ``from . import __version__`` depends on it);
* a package's node *is* its ``__init__.py``, so importing a package depends on
  everything its ``__init__`` imports;
* importing ``p.q.r`` also runs ``p/__init__`` and ``p/q/__init__``: those are
  edges too, except the packages ``S`` itself lives in (they are loaded before
  ``S`` whatever ``S`` imports, so counting them would put every module in a
  circle with ``calsim/__init__``).

>>> graph = import_graph(Path(__file__).resolve().parents[1] / "calsim")
>>> ("calsim.schedule", "calsim.rules.cron") in {(s, t) for s, t, _ in graph.edges}
True
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path


PACKAGE = Path(__file__).resolve().parents[1] / "calsim"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
MAX_LINES = 600
# The rule kinds: a module outside calsim/rules/ asks a rule what the protocol says (RuleKind), never its class.
RULE_KINDS = {"RRule", "Cron", "Every", "Window", "OnCalendar", "QuartzCron", "RobfigCron", "ApschedulerCron"}


@dataclass(frozen=True)
class Import:
    """Where an edge comes from: file, line, the statement, and whether it runs at import, in a function, or never."""

    path: str
    line: int
    text: str
    where: str  # "module", "function" or "type-checking"

    def __str__(self) -> str:
        return f"{self.path}:{self.line} ({self.where}) {self.text}"


@dataclass
class Graph:
    modules: dict[str, Path]
    edges: list[tuple[str, str, Import]] = field(default_factory=list)

    def successors(self) -> dict[str, dict[str, Import]]:
        """module -> {imported module: the first statement that imports it}."""
        out: dict[str, dict[str, Import]] = {m: {} for m in self.modules}
        for s, t, how in self.edges:
            out[s].setdefault(t, how)
        return out


def module_names(root: Path) -> dict[str, Path]:
    """``calsim.simulation.policy`` -> its file, ``calsim.simulation`` -> its ``__init__.py``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _statements(tree: ast.Module):
    """Every import statement with where it runs (module level, inside a function, only for type checkers)."""
    def visit(node: ast.AST, where: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, where
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from visit(child, "function" if where == "module" else where)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for n in child.body:
                    yield from visit(ast.Module(body=[n], type_ignores=[]), "type-checking")
                for n in child.orelse:
                    yield from visit(ast.Module(body=[n], type_ignores=[]), where)
            else:
                yield from visit(child, where)
    yield from visit(tree, "module")


def import_graph(root: Path = PACKAGE) -> Graph:
    """The import graph of the package at ``root``, read from its source."""
    modules = module_names(root)
    graph = Graph(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}  # S and its packages
        rel = path.relative_to(root.parent).as_posix()
        for node, where in _statements(ast.parse(path.read_text(), str(path))):
            how = Import(rel, node.lineno, ast.unparse(node), where)
            targets: list[tuple[str, bool]] = []  # (module, named explicitly)
            if isinstance(node, ast.Import):
                targets = [(a.name, True) for a in node.names]
            else:
                if node.level:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    base = f"{base}.{node.module}" if node.module else base
                else:
                    base = node.module or ""
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
                targets = [(m, True) for m in subs]
                # the package itself: named when a name is not a submodule, or when it is one of S's own
                # packages (``from . import x`` reads x off a package whose ``__init__`` may still be running:
                # ``import calsim.store.x as x`` or ``from .x import name`` do not), else loaded on the way
                targets.append((base, len(subs) < len(node.names) or base in own))
            for target, named in targets:
                if target != root.name and not target.startswith(root.name + "."):
                    continue  # another distribution (``from distributed import Client`` is dask's)
                parts = target.split(".")
                for i in range(1, len(parts) + 1):
                    step = ".".join(parts[:i])
                    explicit = named and step == target
                    if step in modules and step != name and (explicit or step not in own):
                        graph.edges.append((name, step, how))
    return graph


def _sccs(succ: dict[str, dict[str, Import]]) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    for start in succ:
        if start in index:
            continue
        work = [(start, iter(succ[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(comp)
    return out


def cycles(graph: Graph) -> list[list[str]]:
    """The shortest circle through each import edge that lies on one, shortest first, each once.

    Enumerating every elementary circle can explode; one shortest circle per
    edge names every edge to cut and stays small.
    """
    succ = graph.successors()
    found: set[tuple[str, ...]] = set()
    for comp in _sccs(succ):
        for u in comp:
            for v in succ[u]:
                if v not in comp:
                    continue
                prev = {v: None}  # shortest path v -> u inside the component
                queue = deque([v])
                while queue and u not in prev:
                    x = queue.popleft()
                    for y in succ[x]:
                        if y in comp and y not in prev:
                            prev[y] = x
                            queue.append(y)
                back = [u]  # u, ..., v along prev
                while back[-1] != v:
                    back.append(prev[back[-1]])
                loop = [u, *back[:0:-1]]  # u -> v -> ... -> (back to) u
                k = loop.index(min(loop))
                found.add(tuple(loop[k:] + loop[:k]))
    return [list(c) for c in sorted(found, key=lambda c: (len(c), c))]


def describe(graph: Graph, loops: list[list[str]]) -> str:
    succ = graph.successors()
    lines = [f"{len(loops)} import circle(s), shortest first:"]
    for loop in loops:
        lines.append("  " + " -> ".join([*loop, loop[0]]))
        for a, b in zip(loop, [*loop[1:], loop[0]]):
            lines.append(f"      {a} -> {b}: {succ[a][b]}")
    return "\n".join(lines)


def documented_layers(doc: str) -> list[tuple[str, list[str]]]:
    """The layers of the first diagram of docs/architecture.md, top first: ``(name, [entry, ...])``.

    A row whose first 18 characters hold a name opens a layer, the rows under
    it continue it; an entry is a word ending in ``.py`` (a glob: ``cli*.py``)
    or ``/`` (a package), relative to ``calsim/``; text in parentheses is prose.
    """
    block = doc.split("```\n", 2)[1]
    layers: list[tuple[str, list[str]]] = []
    text: list[str] = []
    for row in block.splitlines():
        if not row.strip() or row.strip().startswith("─"):
            continue
        if row[:18].strip():
            layers.append((row[:18].strip(), []))
            text.append("")
        text[-1] += " " + row[18:]
    for (_, entries), words in zip(layers, text):
        words = re.sub(r"\([^)]*\)", " ", words)  # prose, which may wrap onto the next row
        entries.extend(w.removeprefix("calsim/") for w in re.split(r"[,\s]+", words) if w.endswith((".py", "/")))
    return layers


def layer_of(module: str, path: Path, root: Path, layers: list[tuple[str, list[str]]]) -> int | None:
    """The rank (0 = top) of the most specific entry naming ``path`` (``simulation/policy.py`` before
    ``simulation/``); None when no entry does."""
    rel = path.relative_to(root).as_posix()
    best: tuple[int, int] | None = None
    for rank, (_, entries) in enumerate(layers):
        for entry in entries:
            hit = rel.startswith(entry) if entry.endswith("/") else fnmatch.fnmatch(rel, entry)
            if hit and (best is None or len(entry) > best[1]):
                best = (rank, len(entry))
    return None if best is None else best[0]


def upward_arrows(graph: Graph, layers: list[tuple[str, list[str]]], root: Path = PACKAGE) -> list[str]:
    """Each import from a module to one in a higher layer, with its statement.

    A package whose ``__init__`` imports nothing (``calsim.simulation``) is
    loaded on the way to its submodules without running anything: importing
    ``simulation/policy.py`` is not an arrow to the engine beside it.
    """
    rank = {m: layer_of(m, p, root, layers) for m, p in graph.modules.items()}
    inert = {m for m, p in graph.modules.items() if p.name == "__init__.py"} - {s for s, _, _ in graph.edges}
    out = []
    for s, t, how in graph.edges:
        rs, rt = rank[s], rank[t]
        if t not in inert and rs is not None and rt is not None and rt < rs:
            out.append(f"{s} ({layers[rs][0]}) -> {t} ({layers[rt][0]}): {how}")
    return out


# ----------------------------------------------------------------- the reader itself


def _graph_of(tmp_path: Path, files: dict[str, str]) -> Graph:
    root = tmp_path / "pkg"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return import_graph(root)


def test_graph_reads_module_function_and_type_checking_imports_as_edges(tmp_path):
    g = _graph_of(tmp_path, {
        "__init__.py": "",
        "a.py": "from .b import x\n",
        "b.py": "def f():\n    import pkg.c as c\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import y\n",
    })
    assert {(s, t, i.where) for s, t, i in g.edges} == {
        ("pkg.a", "pkg.b", "module"), ("pkg.b", "pkg.c", "function"), ("pkg.c", "pkg.a", "type-checking")}
    assert cycles(g) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_a_submodule_taking_a_sibling_off_its_package_depends_on_the_packages_init(tmp_path):
    """``from . import c`` reads ``c`` off ``pkg``, whose ``__init__`` (importing ``b``) may still be running."""
    g = _graph_of(tmp_path, {"__init__.py": "from .b import f\n", "b.py": "from . import c\n", "c.py": ""})
    assert ("pkg.b", "pkg", "module") in {(s, t, i.where) for s, t, i in g.edges}
    assert cycles(g) == [["pkg", "pkg.b"]]


def test_graph_counts_a_package_init_and_the_packages_on_the_way(tmp_path):
    g = _graph_of(tmp_path, {
        "__init__.py": "from .sub.leaf import v\n",
        "sub/__init__.py": "from .leaf import v\n",
        "sub/leaf.py": "v = 1\n",
        "top.py": "from .sub.leaf import v\nfrom . import __version__\n",
        "sib.py": "from .sub import leaf\n",
    })
    edges = {(s, t) for s, t, _ in g.edges}
    # top imports leaf, and runs sub/__init__ on the way; `from . import __version__` names the package
    assert {("pkg.top", "pkg.sub.leaf"), ("pkg.top", "pkg.sub"), ("pkg.top", "pkg")} <= edges
    assert ("pkg.sib", "pkg.sub.leaf") in edges and ("pkg.sib", "pkg.sub") in edges
    # a module's own packages are loaded before it: no edge leaf -> sub, no circle sub <-> leaf
    assert ("pkg.sub.leaf", "pkg.sub") not in edges
    assert cycles(g) == []


def test_cycles_are_reported_shortest_first_with_the_import_lines(tmp_path):
    g = _graph_of(tmp_path, {
        "__init__.py": "",
        "a.py": "import pkg.b\nfrom . import c\n",
        "b.py": "from .a import x\n",
        "c.py": "from .d import x\n",
        "d.py": "def f():\n    from .a import y\n",
    })
    loops = cycles(g)
    assert loops == [["pkg.a", "pkg.b"], ["pkg.a", "pkg.c", "pkg.d"]]
    text = describe(g, loops)
    assert "pkg/d.py:2 (function) from .a import y" in text
    assert text.index("pkg.a -> pkg.b -> pkg.a") < text.index("pkg.a -> pkg.c -> pkg.d -> pkg.a")


_DOC = """# layers

```
  top             a.py, sub/
  ───────────
  bottom          b.py (prose, which
                  wraps), sub/low.py
```
"""


def test_the_layer_diagram_is_read_top_first_with_prose_and_wrapped_rows():
    assert documented_layers(_DOC) == [("top", ["a.py", "sub/"]), ("bottom", ["b.py", "sub/low.py"])]


def test_an_import_up_the_layers_is_an_arrow_and_the_most_specific_entry_decides(tmp_path):
    graph = _graph_of(tmp_path, {"__init__.py": "", "a.py": "", "b.py": "from . import a\n",
                                 "sub/__init__.py": "", "sub/low.py": "from .. import b\n",
                                 "sub/high.py": "from .low import x\n"})
    arrows = upward_arrows(graph, documented_layers(_DOC), tmp_path / "pkg")
    assert arrows == ["pkg.b (bottom) -> pkg.a (top): pkg/b.py:1 (module) from . import a"]


# ----------------------------------------------------------------- calsim


def test_every_calsim_module_has_a_layer_in_the_architecture_document():
    layers = documented_layers(ARCHITECTURE.read_text())
    unplaced = [m for m, p in import_graph().modules.items() if layer_of(m, p, PACKAGE, layers) is None]
    assert not unplaced, f"docs/architecture.md's diagram places no entry on {unplaced}"


def test_no_calsim_import_runs_up_the_documented_layers():
    arrows = upward_arrows(import_graph(), documented_layers(ARCHITECTURE.read_text()))
    assert not arrows, f"{len(arrows)} upward arrow(s):\n" + "\n".join(arrows)



def test_calsim_has_no_import_circle():
    graph = import_graph()
    loops = cycles(graph)
    assert not loops, describe(graph, loops)


def test_no_calsim_module_is_over_600_lines():
    long = {p.relative_to(PACKAGE.parent).as_posix(): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them, one job per module): {long}"


def type_switches(root: Path = PACKAGE) -> list[str]:
    """``isinstance``/``issubclass`` calls naming a rule kind, outside ``calsim/rules/`` (file:line)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        if path.parent.name == "rules":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
                names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                if names & RULE_KINDS:
                    out.append(f"{path.relative_to(root.parent).as_posix()}:{node.lineno}")
    return out


def test_a_type_switch_on_a_rule_kind_is_found(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("def f(rule):\n    return isinstance(rule, (Cron, int))\n")
    assert type_switches(tmp_path / "pkg") == ["pkg/m.py:2"]


def test_no_module_outside_the_rule_kinds_switches_on_a_rule_kind():
    assert not type_switches(), "ask the rule (calsim/rules/kind.py's protocol), not its class: " + \
        ", ".join(type_switches())


# ----------------------------------------------------------------- the three walks of docs/architecture.md


def walkthroughs(doc: str) -> dict[str, tuple[list[str], list[str]]]:
    """docs/architecture.md's walks: title -> (``Files:``, ``Also:``), paths as written (``<module>`` etc.)."""
    part = doc.split("## Three changes, walked through", 1)[1].split("\n## ", 1)[0]
    out = {}
    for section in part.split("\n### ")[1:]:
        lists: dict[str, list[str]] = {"Files:": [], "Also:": []}
        for row in section.splitlines():
            for key in lists:
                if row.startswith(key):  # a path in parentheses is prose: `Also: x (when `y`)` lists x only
                    lists[key] = re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", row))
        out[section.splitlines()[0].strip()] = (lists["Files:"], lists["Also:"])
    return out


def registered() -> dict[str, list[tuple[str, dict[str, str], dict[str, str]]]]:
    """Each registry's entries: walk title -> [(module, placeholders, {listed file: what it must say})].

    The module file must define the entry; the registry file must name it
    (the class, the import, the module); the README must have its table row;
    the test file must name it.
    """
    import calsim
    import calsim.importers.history as history
    import calsim.presets as presets
    from calsim.rules.kind import RuleKind

    def kinds(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from kinds(sub)

    assert calsim  # (importing it loads every rule kind)
    rules = [(k.__module__, {"module": k.__module__.rsplit(".", 1)[1], "kind": k.kind},
              {"calsim/schedule.py": k.__name__, "README.md": f"| `{k.kind}` |", "tests/": k.__name__})
             for k in dict.fromkeys(kinds(RuleKind)) if "kind" in vars(k) and k.__module__.startswith("calsim.")]
    made = [(getattr(presets, n).__module__, {"name": n},
             {"calsim/presets/__init__.py": f"import {n}\n", "README.md": f"| `{n}` |", "tests/": f"{n}("})
            for n in presets.SCHEDULERS]
    readers = [(r.read.__module__, {"module": r.read.__module__.rsplit(".", 1)[1], "kind": k},
                {"calsim/importers/history/__init__.py": r.read.__module__.rsplit(".", 1)[1],
                 "README.md": f"`{k}`", "tests/": f'"{k}"'})
               for k, r in history.READERS.items()]
    return {"A rule kind": rules, "A preset": made, "A history reader": readers}


def _fill(path: str, values: dict[str, str]) -> str:
    return re.sub(r"<(\w+)>", lambda m: values[m.group(1)], path)


def test_the_walks_are_read_with_their_files_and_the_places_they_touch_only_sometimes():
    doc = "## Three changes, walked through\n\n### A thing\n\n1. text `not/this.py`\n\n" \
          "Files: `a/<module>.py`, `README.md`\nAlso: `b/` (when `c.py` says so), `d.py`\n\n## Next\n"
    assert walkthroughs(doc) == {"A thing": (["a/<module>.py", "README.md"], ["b/", "d.py"])}


def test_the_architecture_document_walks_a_rule_kind_a_preset_and_a_history_reader():
    assert set(walkthroughs(ARCHITECTURE.read_text())) == set(registered())


def test_every_registered_kind_preset_and_reader_has_each_file_its_walk_lists_and_is_named_in_it():
    walks, root = walkthroughs(ARCHITECTURE.read_text()), PACKAGE.parent
    missing = []
    for title, entries in registered().items():
        files, _ = walks[title]
        assert entries and files, title
        for module, values, says in entries:
            for path in (_fill(p, values) for p in files):
                file = root / path
                want = "" if path == module.replace(".", "/") + ".py" else \
                    next(text for start, text in says.items() if path.startswith(start))
                if not file.is_file():
                    missing.append(f"{title} {module}: no {path}")
                elif want not in file.read_text():
                    missing.append(f"{title} {module}: {path} does not say {want!r}")
    assert not missing, "\n".join(missing)


def test_no_module_outside_its_walk_imports_a_rule_kind_a_preset_or_a_history_reader():
    walks, graph = walkthroughs(ARCHITECTURE.read_text()), import_graph()
    stray = []
    for title, entries in registered().items():
        files, also = walks[title]
        for module, values, _ in entries:
            allowed = [_fill(p, values) for p in files + also]
            for s, t, how in graph.edges:
                where = graph.modules[s].relative_to(PACKAGE.parent).as_posix()
                if t == module and not any(where == a or (a.endswith("/") and where.startswith(a)) for a in allowed):
                    stray.append(f"{title} {module}: {how}")
    assert not stray, "imported outside the files its walk lists:\n" + "\n".join(stray)

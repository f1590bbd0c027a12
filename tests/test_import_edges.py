"""Imports between cuzk's packages follow DESIGN.md §2's allowed edges, and nothing else.

Every module under ``cuzk/`` is parsed with ``ast``; every ``import``/``from ... import`` counts,
wherever it sits (module level, inside a function, under ``TYPE_CHECKING``), and so does
``importlib.import_module("cuzk....")`` with a literal name. A new edge either fits the table
below or is added to ``EXCEPTIONS`` with its reason, on purpose.

The same parse also builds the module graph, which must have no cycle (``test_no_import_cycle``;
:func:`import_graph` says how an import becomes an edge).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cuzk

ROOT = Path(cuzk.__file__).resolve().parent
ANY = "any"

#: package (or top-level module) -> the packages it may import, as DESIGN.md §2 lists them
ALLOWED: dict[str, set[str] | str] = {
    "field": set(),
    "curve": {"field"},
    "curves": {"field", "curve", "kernels"},  # DESIGN §8: specs, the registry, generated per-curve modules
    # DESIGN §8: circuit, synth, groth16, formats, prover -> curves, to resolve a curve name or bundle
    "circuit": {"field", "curves"},
    # not in DESIGN's table: ready-made circuits (Cube, PoRep-like), written with the circuit DSL
    "circuits": {"circuit", "field"},
    "synth": {"circuit", "field", "curves"},
    "kernels": {"curve", "field"},
    "groth16": {"kernels", "curve", "field", "synth", "timeline", "curves"},
    "formats": {"groth16", "synth", "curve", "field", "curves"},
    "prover": {"groth16", "kernels", "formats", "timeline", "curves"},
    "pipeline": {"prover", "synth", "timeline"},
    "engine": {"pipeline", "prover", "groth16", "formats", "synth", "timeline"},  # DESIGN §8
    # DESIGN §8: cluster -> engine and what engine may import
    "cluster": {"engine", "pipeline", "prover", "groth16", "formats", "synth", "timeline"},
    "timeline": set(),
    # DESIGN §9: the daemon maps RPCs onto the Engine; Filecoin payloads are decoded by circuits/filecoin,
    # snarkjs JSON by formats, proofs checked with groth16; [[circuits]] entries are Synthesizers
    "serve": {"engine", "circuits", "formats", "groth16", "synth", "circuit", "pipeline", "timeline"},
    "reference": set(),  # an independent oracle: nothing of the fast paths (see MODULE_ALLOWED)
    "cli": ANY,
    "cli_groth16": ANY,  # the cli's groth16 sub-commands, split off cli.py
    "cli_keys": ANY,  # `cuzk keys list|clear`, split off cli.py
    "cli_serve": ANY,  # `cuzk serve`, split off cli.py
    "cli_client": ANY,  # `cuzk client status|health|...` against a running daemon, split off cli.py
    "cli_porep": ANY,  # `cuzk porep seal|c2|verify`, split off cli.py
    "cli_exit": set(),  # how a cli process ends (fast for groth16 prove|verify)
    "demo": ANY,
    "__main__": ANY,
    "__init__": ANY,  # the public facade re-exports everything
    "errors": set(),
    # not in DESIGN's table: the bounded JSON loader groth16, formats and timeline all share
    "bounded_json": set(),
    "atomic_file": set(),
    # not in DESIGN's table: the one Prometheus text writer, for the Pipeline's and the Engine's metrics
    "prometheus": set(),
    "_runtime": set(),
    "_numba_loads": set(),  # Numba cache loads without the compiler registries, installed by __init__
    "_version": set(),
}

#: importable from every package
EVERYWHERE = {"errors", "_runtime", "bounded_json", "atomic_file", "prometheus"}

#: single modules a package may import although their package is not an allowed edge
MODULE_ALLOWED = {
    "reference": {"cuzk.field.params": "field parameters are data (moduli, roots), not a fast path"},
}

#: where DESIGN narrows an edge to some names: (importer, imported package) -> names
NAMES_ONLY = {("groth16", "timeline"): {"span"}}

#: deliberate deviations: (importing file, imported module) -> why
EXCEPTIONS = {
    **{(f"{pkg}/__init__.py", "cuzk.curves.default"):
       "the default curve's short names (cuzk.field.Fr, cuzk.curve.G1, ...), which users and the "
       "Filecoin circuits write, are looked up in the one table of cuzk/curves/default.py on first "
       "use (a module __getattr__); nothing else in the package reaches a curve"
       for pkg in ("field", "curve")},
    **{("circuits/filecoin/porep/c2.py", m):
       "commit_phase2 / verify_commit_phase2 are filecoin-proofs' seal_commit_phase2 and verify_seal "
       "shapes (C1 in, proof bytes out), the call a storage provider expects beside seal and "
       "commit_phase1; imported at call time so the circuits stay importable without the prover"
       for m in ("cuzk.groth16", "cuzk.groth16.prove", "cuzk.groth16.verify", "cuzk.synth")},
    **{("circuits/filecoin/update/prove.py", m):
       "prove_update / verify_update are filecoin-proofs' generate_empty_sector_update_proof_with_vanilla "
       "and verify_empty_sector_update_proof shapes (partition proofs in, proof bytes out), as "
       "commit_phase2 is for PoRep; imported at call time so the circuits stay importable without the prover"
       for m in ("cuzk.groth16", "cuzk.groth16.prove", "cuzk.groth16.verify", "cuzk.synth")},
}


def _package_of(module: str) -> str | None:
    """``cuzk.synth.r1cs`` -> ``synth``; ``cuzk`` itself -> ``__init__``; non-cuzk -> None."""
    parts = module.split(".")
    if parts[0] != "cuzk":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = ["cuzk", *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_submodule(name: str) -> bool:
    # "from cuzk import errors" imports the module cuzk.errors; "from cuzk import Circuit" the facade
    if name.split(".")[0] != "cuzk":
        return False
    base = ROOT.joinpath(*name.split(".")[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` but those only type checkers run: the body of ``if TYPE_CHECKING:``
    (its ``else`` runs, so it stays)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            todo += [node.test, *node.orelse]
        else:
            todo += ast.iter_child_nodes(node)


def imports_of(source: str, module: str, is_package: bool, *, is_module=None,
               type_checking: bool = True) -> list[tuple[int, str, tuple[str, ...]]]:
    """``(line, imported module, names)`` for every cuzk import in ``source``.

    ``is_module(name)`` tells a submodule from a name (default: a file under cuzk/);
    ``type_checking=False`` leaves out what ``if TYPE_CHECKING:`` imports.

    >>> imports_of("def f():\\n    from cuzk.kernels import cpu", "cuzk.formats.x", False)
    [(2, 'cuzk.kernels.cpu', ())]
    """
    is_module = is_module or _is_submodule
    found = []
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    for node in (ast.walk(tree) if type_checking else _runtime_nodes(tree)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = tuple(a.name for a in node.names)
            subs = [n for n in names if is_module(f"{target}.{n}")]
            found += [(node.lineno, f"{target}.{n}", ()) for n in subs]
            rest = tuple(n for n in names if n not in subs)
            if rest:
                found.append((node.lineno, target, rest))
        elif (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
              and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value, ()))
    return [f for f in found if _package_of(f[1]) is not None]


def violations_in(rel: str, source: str) -> list[tuple[str, str, str]]:
    """``(where, imported module, why)`` for every import of ``rel`` (a path under cuzk/) off the table."""
    path = ROOT / rel
    module, is_package = _module_name(path), path.name == "__init__.py"
    src_pkg = _package_of(module)
    if src_pkg not in ALLOWED:
        return [(rel, "-", f"package {src_pkg!r} is not in the edge table; add it with its allowed imports")]
    allowed = ALLOWED[src_pkg]
    out = []
    for line, target, names in imports_of(source, module, is_package):
        dst = _package_of(target)
        if dst == src_pkg or allowed == ANY or dst in EVERYWHERE:
            continue
        if target in MODULE_ALLOWED.get(src_pkg, {}):
            continue
        if dst not in allowed:
            out.append((f"{rel}:{line}", target, f"{src_pkg} -> {dst} is not an allowed edge"))
        elif (src_pkg, dst) in NAMES_ONLY and (not names or set(names) - NAMES_ONLY[src_pkg, dst]):
            out.append((f"{rel}:{line}", target,
                        f"{src_pkg} may import only {sorted(NAMES_ONLY[src_pkg, dst])} from {dst}"))
    return out


def _all_violations() -> list[tuple[str, str, str]]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        out += violations_in(rel, path.read_text(encoding="utf-8"))
    return out


def test_no_import_crosses_a_forbidden_edge():
    bad = [v for v in _all_violations() if (v[0].rpartition(":")[0], v[1]) not in EXCEPTIONS]
    assert not bad, "imports off DESIGN.md §2's edges:\n" + "\n".join(f"  {w}: {t} ({why})" for w, t, why in bad)


def test_no_generic_package_imports_a_curve_module():
    # every curve lives in cuzk/curves/<name>/ (generated); everything outside cuzk/curves reaches
    # a curve through cuzk.curves.get(name), which imports the modules by their layout names
    from cuzk.curves import CURVES

    pkgs = [f"cuzk.curves.{name}" for name in CURVES]
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("curves/"):
            continue
        module, is_package = _module_name(path), path.name == "__init__.py"
        found += [f"{rel}:{line}: {target}"
                  for line, target, _ in imports_of(path.read_text(encoding="utf-8"), module, is_package)
                  if any(target == p or target.startswith(p + ".") for p in pkgs)]
    assert not found, "curve modules imported outside cuzk/curves (use cuzk.curves.get):\n" + "\n".join(found)


def test_every_listed_exception_still_exists():
    # a deviation that was fixed must leave the list, so it cannot come back unnoticed
    seen = {(v[0].rpartition(":")[0], v[1]) for v in _all_violations()}
    stale = [k for k in EXCEPTIONS if k not in seen]
    assert not stale, f"EXCEPTIONS lists edges no longer present: {stale}"


def _imports_ray(source: str) -> bool:
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        if any(n == "ray" or n.startswith("ray.") for n in names):
            return True
    return False


def _imports_grpc(source: str) -> bool:
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        if any(n.split(".")[0] in ("grpc", "grpc_health", "grpc_reflection", "google") for n in names):
            return True
    return False


def test_only_the_serve_package_imports_grpc():
    # DESIGN §9: grpcio and protobuf are the optional extra [serve]; nothing outside cuzk/serve needs them
    users = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py") if _imports_grpc(p.read_text("utf-8")))
    assert users and all(u.startswith("serve/") for u in users), users


def test_only_the_cluster_package_imports_ray():
    # DESIGN §8: Ray is an optional extra; nothing outside cuzk/cluster may need it
    users = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py") if _imports_ray(p.read_text("utf-8")))
    assert users and all(u.startswith("cluster/") for u in users), users


@pytest.mark.parametrize("rel, source, expected", [
    ("formats/x.py", "def f():\n    from cuzk.kernels import cpu\n", ["formats -> kernels"]),
    ("synth/x.py", "import cuzk.formats.snarkjs\n", ["synth -> formats"]),
    ("reference/x.py", "from cuzk.field import Fr\n", ["reference -> field"]),
    ("timeline/x.py", "from .. import curve\n", ["timeline -> curve"]),
    ("field/x.py", "import importlib\nimportlib.import_module('cuzk.curves.bls12_381.g1')\n", ["field -> curve"]),
    ("groth16/x.py", "from cuzk.timeline import Timeline\n", ["only ['span']"]),
    ("curve/x.py", "from cuzk import Circuit\n", ["curve -> __init__"]),
    ("groth16/x.py", "from cuzk.formats import bellperson\n", ["groth16 -> formats"]),
    ("newpkg/x.py", "import os\n", ["not in the edge table"]),
    ("cluster/x.py", "from cuzk.kernels import cpu\n", ["cluster -> kernels"]),
    ("engine/x.py", "from cuzk.cluster import RayEngine\n", ["engine -> cluster"]),
    # allowed ones stay silent
    ("formats/x.py", "from cuzk.groth16.keys import ProvingKey\nfrom cuzk.errors import InputError\n", []),
    ("groth16/x.py", "from cuzk.timeline import span\nfrom . import keys\n", []),
    ("reference/x.py", "from cuzk.field.params import FR\nfrom cuzk.reference import points\n", []),
    ("cli.py", "import cuzk\nfrom cuzk.kernels import cuda\n", []),
    ("synth/x.py", "from cuzk import errors\n", []),
    ("prover.py", "from cuzk.formats import bellperson\nfrom cuzk.groth16 import keys\n", []),
    ("cluster/x.py", "from cuzk.engine.engine import Engine\nfrom cuzk.pipeline.core import Route\n", []),
])
def test_checker_catches_forbidden_edges(rel, source, expected):
    got = [why for _, _, why in violations_in(rel, source)]
    assert len(got) == len(expected) and all(e in g for e, g in zip(expected, got)), got


# ---------------------------------------------------------------------------- cycles

def import_graph(modules: dict[str, tuple[str, bool]]) -> dict[str, dict[str, int]]:
    """``module -> {imported module: line}`` over ``modules`` (name -> (source, is a package)).

    An edge is any ``import``/``from ... import`` Python runs: at module level or inside a
    function (an import deferred to call time closes the same loop, only later), and a literal
    ``importlib.import_module``. What ``if TYPE_CHECKING:`` imports is left out: only type
    checkers run it, so it cannot make an import loop.

    Where an edge points:

    * ``import cuzk.a.b`` and ``from cuzk.a.b import name``: to ``cuzk.a.b``;
    * ``from cuzk.a import b`` where ``cuzk/a/b.py`` (or ``cuzk/a/b/``) exists: to that submodule,
      and ``from cuzk.a import name`` for any other name: to the package ``cuzk.a`` (its
      ``__init__``, which is what defines or re-exports the name); relative imports alike;
    * a package's ``__init__`` is a module like any other, so its re-exports are its edges.

    Importing ``cuzk.a.b`` also runs ``cuzk/a/__init__.py`` first; that implicit step is not an
    edge, or every absolute import of a sibling inside a package whose ``__init__`` re-exports it
    would read as a loop through the ``__init__``. A loop through an ``__init__`` shows up all the
    same when the modules import the package's own names (``from cuzk.a import name``).

    >>> g = import_graph({"cuzk.a": ("from cuzk.a.x import f", True), "cuzk.a.x": ("def f():\\n    from . import y", False),
    ...                   "cuzk.a.y": ("from cuzk.a import f", False)})
    >>> g
    {'cuzk.a': {'cuzk.a.x': 1}, 'cuzk.a.x': {'cuzk.a.y': 2}, 'cuzk.a.y': {'cuzk.a': 1}}
    """
    graph = {}
    for module, (source, is_package) in modules.items():
        edges: dict[str, int] = {}
        for line, target, _ in imports_of(source, module, is_package, is_module=modules.__contains__,
                                          type_checking=False):
            while target not in modules and "." in target:  # "import cuzk.a.b.name": the module holding it
                target = target.rpartition(".")[0]
            if target in modules and target != module:
                edges.setdefault(target, line)
        graph[module] = edges
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative),
    each sorted, in order of their first module.

    >>> strongly_connected({"a": {"b": 1}, "b": {"c": 1, "a": 2}, "c": {}, "d": {"d": 1}})
    [['a', 'b']]
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next((w for w in edges if w in graph and (w not in index or w in on_stack)), None)
            if nxt is not None:
                if nxt in index:
                    low[node] = min(low[node], index[nxt])
                else:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _one_loop(graph: dict[str, dict[str, int]], component: list[str]) -> list[str]:
    """A shortest loop from the component's first module back to it, as the modules it passes."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        step = []
        for node in frontier:
            for w in graph[node]:
                if w == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w in members and w not in came_from:
                    came_from[w] = node
                    step.append(w)
        frontier = step
    raise AssertionError(f"{component} is not strongly connected")


def describe_cycles(graph: dict[str, dict[str, int]]) -> list[str]:
    """One line per import cycle: its modules, then one loop through them with each edge's line."""
    out = []
    for component in strongly_connected(graph):
        loop = _one_loop(graph, component)
        hops = " -> ".join(f"{b} (line {graph[a][b]} of {a})" for a, b in zip(loop, loop[1:]))
        out.append(f"{', '.join(component)}: {loop[0]} -> {hops}")
    return out


def _cuzk_modules() -> dict[str, tuple[str, bool]]:
    return {_module_name(p): (p.read_text(encoding="utf-8"), p.name == "__init__.py") for p in sorted(ROOT.rglob("*.py"))}


def test_no_import_cycle():
    # a cycle makes a module's import order matter (the second module sees a half-initialized
    # first one) and ties two modules that should be layered into one; deferring one import into
    # a function hides the loop from Python's import machinery but not from this graph
    cycles = describe_cycles(import_graph(_cuzk_modules()))
    assert not cycles, "import cycles in cuzk (cut each: see import_graph's docstring for the edges):\n" + \
        "\n".join(f"  {c}" for c in cycles)


def test_the_graph_resolves_every_cuzk_import():
    # a spot check that the graph is the real one: edges the cycle test relies on being seen
    graph = import_graph(_cuzk_modules())
    assert "cuzk.groth16.keys" in graph["cuzk.formats.bellperson"]  # from cuzk.groth16.keys import ...
    assert "cuzk.curves" in graph["cuzk.groth16.keys"]  # from cuzk import curves: the package
    assert "cuzk.timeline.summary" in graph["cuzk.timeline"]  # an __init__'s re-export


_TC = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cuzk.p.a import A\n"


@pytest.mark.parametrize("a, b, cycles", [
    ("from cuzk.p.b import B\n", "def f():\n    from cuzk.p.a import A\n", [["cuzk.p.a", "cuzk.p.b"]]),
    ("from cuzk.p.b import B\n", "def f():\n    from cuzk.p import a\n", [["cuzk.p.a", "cuzk.p.b"]]),
    ("from cuzk.p.b import B\n", "from .a import A\n", [["cuzk.p.a", "cuzk.p.b"]]),
    ("from cuzk.p.b import B\n", "import cuzk.p.a.A\n", [["cuzk.p.a", "cuzk.p.b"]]),
    ("from cuzk.p.b import B\n", "import importlib\nimportlib.import_module('cuzk.p.a')\n", [["cuzk.p.a", "cuzk.p.b"]]),
    ("from cuzk.p.b import B\n", _TC, []),  # type checkers only
    ("from cuzk.p.b import B\n", _TC + "else:\n    from cuzk.p.a import A\n", [["cuzk.p.a", "cuzk.p.b"]]),
    # the package's __init__ imports b: a name of the package from b loops through the __init__,
    # a submodule of the package does not
    ("", "from cuzk.p import A\n", [["cuzk.p", "cuzk.p.b"]]),
    ("", "from cuzk.p import a\n", []),
    ("", "from . import a\n", []),
])
def test_cycle_finder(a, b, cycles):
    graph = import_graph({"cuzk.p": ("from cuzk.p.b import B\n", True), "cuzk.p.a": (a, False), "cuzk.p.b": (b, False)})
    assert strongly_connected(graph) == cycles
    assert len(describe_cycles(graph)) == len(cycles)


def test_a_cycle_is_described_edge_by_edge():
    graph = import_graph({"cuzk.x": ("import cuzk.y\n", False), "cuzk.y": ("\n\ndef f():\n    import cuzk.x\n", False)})
    assert describe_cycles(graph) == ["cuzk.x, cuzk.y: cuzk.x -> cuzk.y (line 1 of cuzk.x) -> cuzk.x (line 4 of cuzk.y)"]

"""Imports between cuzk's packages follow DESIGN.md §2's allowed edges, and nothing else.

Every module under ``cuzk/`` is parsed with ``ast``; every ``import``/``from ... import`` counts,
wherever it sits (module level, inside a function, under ``TYPE_CHECKING``), and so does
``importlib.import_module("cuzk....")`` with a literal name. A new edge either fits the table
below or is added to ``EXCEPTIONS`` with its reason, on purpose.
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
    ("groth16/keys.py", "cuzk.formats.bellperson"):
        "ProvingKey.read/write and VerifyingKey.to_bytes/from_bytes (DESIGN §7 API) delegate to "
        "the bellperson byte format, imported at call time so module import stays acyclic",
    ("groth16/proof.py", "cuzk.formats.bellperson_proof"):
        "Proof.to_bytes/from_bytes (DESIGN §7 API) delegate to the bellperson proof bytes, which "
        "live in formats so that groth16 names no curve's encoding; imported at call time",
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


def imports_of(source: str, module: str, is_package: bool) -> list[tuple[int, str, tuple[str, ...]]]:
    """``(line, imported module, names)`` for every cuzk import in ``source``.

    >>> imports_of("def f():\\n    from cuzk.kernels import cpu", "cuzk.formats.x", False)
    [(2, 'cuzk.kernels.cpu', ())]
    """
    found = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = tuple(a.name for a in node.names)
            subs = [n for n in names if _is_submodule(f"{target}.{n}")]
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
        if any(n.split(".")[0] in ("grpc", "google") for n in names):
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
    ("field/x.py", "import importlib\nimportlib.import_module('cuzk.curve.g1')\n", ["field -> curve"]),
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

"""The curves-as-data sweep: generic packages name no curve and hold no curve's numbers.

"When this is done, groth16/, synth/, circuit/, pipeline/ and timeline/ contain no curve
constants and no per-curve branches." Every module of those packages is parsed with ``ast``
(docstrings and comments are prose and are not checked; code is), and each of these fails the
test unless :data:`ALLOWED` lists it with its reason:

* a string constant naming a curve (any name, alias, title or snarkjs name in
  ``cuzk.curves.CURVES``, with or without ``-``/``_``) or equal to a family name ("bls12", "bn"):
  the shape of ``if curve == "bn254":`` and of hard-wired defaults;
* a name or attribute that is a catalog entry (``BLS12_381``, ``BN254``, ...);
* an import of a per-curve module (every module ``cuzk.curves.layout`` lists for every curve,
  their parameter modules, the catalog) or of a per-curve object from a package that holds one
  (``from cuzk.curve import G1``: BLS12-381's group), instead of ``cuzk.curves.get(name)``;
* an integer literal of curve size (≥ 2^64), or equal to a curve's seed x, or a tuple of ints
  that is a point shape with a curve's Fq limb count ``(2, L)`` / ``(2, 2, L)``.

The allow-list must stay short and true: an entry nothing matches fails the test too.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest

import cuzk
from cuzk import curves
from cuzk.curves import catalog
from cuzk.curves.layout import CURVE_MODULES, FIELD_MODULES, KERNEL_MODULES, layout
from cuzk.curves.spec import CurveSpec
from cuzk.curve.params import CurveParams
from cuzk.field.params import FieldParams

ROOT = Path(cuzk.__file__).resolve().parent
PACKAGES = ("groth16", "synth", "circuit", "pipeline", "timeline")

#: (file relative to cuzk/, the matched token) -> why it may stay
ALLOWED = {
    ("synth/pce.py", "BLS12_381"):
        "file-format history: version-1 PCE files predate curves in the header and are BLS12-381's "
        "by definition (not the default curve's, which could change)",
    ("circuit/gadgets/poseidon_spec.py", "bls12_381"):
        "VARIANT_CURVES: the cuzk and neptune Poseidon parameter sets are defined over BLS12-381's Fr "
        "(their constants are drawn for that prime): the field is part of the variant's identity",
    ("circuit/gadgets/poseidon_spec.py", "bn254"):
        "VARIANT_CURVES: circomlib's Poseidon parameter set is defined over BN254's Fr",
}


def _norm(s: str) -> str:
    return s.lower().replace("-", "").replace("_", "")


_SPECS = tuple(curves.CURVES.values())
#: every spelling of a curve (normalized) -> its canonical name
_WORDS = {_norm(w): s.name for s in _SPECS for w in (s.name, s.title, s.snarkjs_name or s.name, *s.aliases)}
_WORD_RE = re.compile("|".join(map(re.escape, sorted(_WORDS, key=len, reverse=True))))
_FAMILIES = {s.family for s in _SPECS}
_CATALOG_NAMES = {n for n, v in vars(catalog).items() if isinstance(v, CurveSpec)}
_SEEDS = {abs(s.x) for s in _SPECS}
_SHAPES = {shape for s in _SPECS for shape in ((2, s.fq.limbs), (2, 2, s.fq.limbs))}


def _per_curve_modules() -> set[str]:
    mods = {"cuzk.curves.catalog"}
    for spec in _SPECS:
        lay = layout(spec)
        mods |= {lay.module(m) for m in FIELD_MODULES + CURVE_MODULES + KERNEL_MODULES}
        mods |= {lay.params_module}
    return mods


PER_CURVE_MODULES = _per_curve_modules()


def _per_curve_object(obj) -> bool:
    if isinstance(obj, ModuleType):
        return obj.__name__ in PER_CURVE_MODULES
    if isinstance(obj, (CurveSpec, FieldParams, CurveParams)):
        return True
    for spec in _SPECS:  # a bundle's fields, groups, pairing and kernels (the default curve's short names too)
        b = curves.get(spec.name)
        if any(obj is getattr(b, k) for k in ("Fr", "Fq", "G1", "G2", "pairing", "kernels")):
            return True
    return False


def _docstring_ids(tree) -> set[int]:
    # a bare string statement does nothing: docstrings (module, class, function, attribute) are prose
    return {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}


def _import_findings(node) -> list[str]:
    out = []
    if isinstance(node, ast.Import):
        out += [a.name for a in node.names if a.name in PER_CURVE_MODULES]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        if node.module in PER_CURVE_MODULES:
            out.append(node.module)
        elif node.module.startswith("cuzk"):
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in PER_CURVE_MODULES:
                    out.append(full)
                    continue
                try:
                    obj = getattr(importlib.import_module(node.module), a.name)
                except (ImportError, AttributeError):
                    continue
                if _per_curve_object(obj):
                    out.append(full)
    return out


def findings(path: Path) -> list[tuple[str, int, str, str]]:
    """(file, line, token, what) for every curve-specific thing in ``path``'s code."""
    rel = path.relative_to(ROOT).as_posix()
    tree = ast.parse(path.read_text(), str(path))
    docs = _docstring_ids(tree)
    out = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and id(node) not in docs:
            v = node.value
            if isinstance(v, str):
                m = _WORD_RE.search(_norm(v))
                if m:
                    out.append((rel, line, _WORDS[m.group(0)], f"string naming a curve: {v[:60]!r}"))
                elif v in _FAMILIES:
                    out.append((rel, line, v, f"string naming a curve family: {v!r}"))
            elif isinstance(v, int) and not isinstance(v, bool):
                if abs(v) >= 1 << 64:
                    out.append((rel, line, hex(v)[:12], "curve-sized integer literal"))
                elif abs(v) in _SEEDS:
                    out.append((rel, line, str(v), "a curve's seed x"))
        elif isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts):
            shape = tuple(e.value for e in node.elts)
            if shape in _SHAPES:
                out.append((rel, line, str(shape), "a point shape with a curve's Fq limb count"))
        elif isinstance(node, ast.Name) and node.id in _CATALOG_NAMES:
            out.append((rel, line, node.id, "a catalog entry by name"))
        elif isinstance(node, ast.Attribute) and node.attr in _CATALOG_NAMES:
            out.append((rel, line, node.attr, "a catalog entry by name"))
        elif isinstance(node, ast.alias) and node.name in _CATALOG_NAMES:
            out.append((rel, line, node.name, "a catalog entry imported by name"))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out += [(rel, line, mod, "import of a per-curve module or object") for mod in _import_findings(node)]
    return out


def _files():
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


@pytest.fixture(scope="module")
def all_findings():
    return [f for p in _files() for f in findings(p)]


def test_generic_packages_name_no_curve(all_findings):
    bad = [f"{rel}:{line}: {what} ({tok})" for rel, line, tok, what in all_findings if (rel, tok) not in ALLOWED]
    assert not bad, ("curve-specific code in a generic package (use cuzk.curves.get(name) and the spec's "
                     "data, or add an ALLOWED entry with its reason):\n" + "\n".join(bad))


def test_allow_list_is_used(all_findings):
    used = {(rel, tok) for rel, _, tok, _ in all_findings}
    assert not set(ALLOWED) - used, f"stale ALLOWED entries: {sorted(set(ALLOWED) - used)}"


@pytest.mark.parametrize("snippet, token", [
    ('if curve == "bn254":\n    pass\n', "bn254"),
    ('name = "BLS12-381"\n', "bls12_381"),
    ('x = "bn128"\n', "bn254"),
    ('fam = "bls12"\n', "bls12"),
    ("from cuzk.curve import G1\n", "cuzk.curve.G1"),
    ("from cuzk.curves.bls12_381.fr import mul\n", "cuzk.curves.bls12_381.fr"),
    ("import cuzk.curves.bn254.pairing\n", "cuzk.curves.bn254.pairing"),
    ("from cuzk.curves import BN254\n", "BN254"),
    ("s = curves.BLS12_381.name\n", "BLS12_381"),
    ("R = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001\n", "0x73eda75329"),
    ("shape = (2, 6)\n", "(2, 6)"),
    ("x = 4965661367192848881\n", "4965661367192848881"),
])
def test_the_sweep_catches(tmp_path, monkeypatch, snippet, token):
    """Each kind of finding is caught (a check that cannot fail would prove nothing)."""
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    f = tmp_path / "groth16" / "m.py"
    f.parent.mkdir()
    f.write_text('"""Docstrings may say BLS12-381 and bn254."""\n' + snippet)
    assert token in {tok for _, _, tok, _ in findings(f)}


def test_docstrings_and_generic_imports_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    f = tmp_path / "m.py"
    f.write_text('"""BLS12-381 and BN254 in prose."""\nfrom cuzk import curves\nfrom cuzk.curve.encoding import point_to_bytes\n'
                 'from cuzk.field.conversions import is_canonical\nc = curves.get(curves.DEFAULT)\n')
    assert findings(f) == []

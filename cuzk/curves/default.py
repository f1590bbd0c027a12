"""The default curve under the short names written before curves were data.

``cuzk.field.Fr``, ``cuzk.field.FR``, ``cuzk.curve.G1``, ``cuzk.curve.pairing_check``, ... are
the default curve's (BLS12-381's, ``cuzk.curves.DEFAULT``) objects. This table is the one place
that says so: ``cuzk.field`` and ``cuzk.curve`` forward a name they do not hold here, and it is
looked up through ``cuzk.curves.get``, so the generic packages import no curve's module and a
program that never names the default curve never loads its kernels.

    >>> import cuzk.field, cuzk.curve
    >>> from cuzk.curves import get
    >>> cuzk.field.Fr is get("bls12_381").Fr, cuzk.curve.G2 is get("bls12_381").G2
    (True, True)
    >>> cuzk.field.FR.two_adicity, hex(cuzk.curve.BLS_X)
    (32, '-0xd201000000010000')
"""

from __future__ import annotations

__all__ = ["FIELD_NAMES", "CURVE_NAMES", "lookup"]

# name -> how to read it off the default curve's bundle (cuzk.curves.registry.CurveBundle)
FIELD_NAMES = {
    "FR": lambda b: b.spec.fr,
    "FQ": lambda b: b.spec.fq,
    "FQ2_NONRESIDUE": lambda b: b.spec.fq2_nonresidue,
    "FQ6_NONRESIDUE": lambda b: b.spec.fq6_nonresidue,
    "Fr": lambda b: b.Fr,
    "Fq": lambda b: b.Fq,
}
CURVE_NAMES = {
    "G1": lambda b: b.G1,
    "G2": lambda b: b.G2,
    "G1_PARAMS": lambda b: b.spec.g1,
    "G2_PARAMS": lambda b: b.spec.g2,
    "BLS_X": lambda b: b.spec.x,
    "pairing_check": lambda b: b.pairing.pairing_check,
    "prepare_g2": lambda b: b.pairing.prepare_g2,
    "G2Prepared": lambda b: b.pairing.G2Prepared,
    "multi_miller_loop": lambda b: b.pairing.multi_miller_loop,
}
_TABLES = {"cuzk.field": FIELD_NAMES, "cuzk.curve": CURVE_NAMES}


def lookup(package: str, name: str):
    """``package``'s default-curve alias ``name`` (a module ``__getattr__`` calls this).

    Raises:
        AttributeError: ``package`` has no such name (what ``getattr`` expects).
    """
    make = _TABLES[package].get(name)
    if make is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    from cuzk.curves.registry import DEFAULT, get  # imported on use: cuzk.curves imports cuzk.field

    return make(get(DEFAULT))

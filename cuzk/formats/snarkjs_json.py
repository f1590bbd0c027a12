"""snarkjs JSON: ``proof.json``, ``public.json``, ``verification_key.json`` (Groth16, BLS12-381).

Numbers are decimal strings. A G1 point is ``[x, y, "1"]``, a G2 point
``[[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]`` (affine; snarkjs writes the identity with z = 0,
``["0", "1", "0"]``). Readers check every point (reduced coordinates, on the curve, in the
subgroup) and raise :class:`~cuzk.errors.SnarkjsFormatError` naming the field.

    >>> proof = read_proof_json("proof.json")                  # doctest: +SKIP
    >>> cuzk.groth16.verify(read_vk_json("verification_key.json"), read_public_json("public.json"), proof)   # doctest: +SKIP
    True
"""

from __future__ import annotations

import json
import os

import numpy as np

from cuzk.curve import G1, G2
from cuzk.errors import SnarkjsFormatError, UnsupportedCurveError
from cuzk.field import FQ, FR
from cuzk.groth16.keys import VerifyingKey
from cuzk.groth16.proof import Proof

__all__ = [
    "proof_to_json", "proof_from_json", "public_to_json", "public_from_json", "vk_to_json", "vk_from_json",
    "read_proof_json", "write_proof_json", "read_public_json", "write_public_json", "read_vk_json", "write_vk_json",
    "loads_bounded",
]

_CURVE = "bls12381"
# snarkjs JSON nests at most 4 deep (vk_alphabeta_12). json's C parser recurses per level and,
# once a library has raised the recursion limit (py_ecc sets 100000 at import), a few 10^4
# nested brackets overflow the C stack: a segfault, not a RecursionError.
MAX_JSON_DEPTH = 64


def _num(v, field: str, modulus: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise SnarkjsFormatError(f"{field}: expected a decimal string, got {type(v).__name__}")
    try:
        x = int(v)
    except ValueError:
        raise SnarkjsFormatError(f"{field}: {v!r} is not a decimal number") from None
    if not 0 <= x < modulus:
        raise SnarkjsFormatError(f"{field}: {x} is outside [0, {'q' if modulus == FQ.modulus else 'r'})")
    return x


def _g1_json(p) -> list:
    x, y = G1.to_ints(p)
    return ["0", "1", "0"] if x == y == 0 else [str(x), str(y), "1"]


def _g2_json(p) -> list:
    x, y = G2.to_ints(p)
    if not any(x + y):
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    return [[str(x[0]), str(x[1])], [str(y[0]), str(y[1])], ["1", "0"]]


def _check_point(group, pt, field: str):
    if not group.is_on_curve(pt):
        raise SnarkjsFormatError(f"{field}: the point is not on the curve")
    if not group.is_in_subgroup(pt):
        raise SnarkjsFormatError(f"{field}: the point is not in the prime-order subgroup")
    return pt


def _g1_from(v, field: str) -> np.ndarray:
    if not isinstance(v, list) or len(v) not in (2, 3):
        raise SnarkjsFormatError(f"{field}: a G1 point is [x, y, z] (z = \"1\", or \"0\" for infinity)")
    xy = [_num(c, field, FQ.modulus) for c in v[:2]]
    z = _num(v[2], field, FQ.modulus) if len(v) == 3 else 1
    if z == 0:
        return G1.identity()
    if z != 1:
        raise SnarkjsFormatError(f"{field}: z = {z}; only affine points (z = 1) are accepted")
    return _check_point(G1, G1.from_ints(tuple(xy)), field)


def _g2_from(v, field: str) -> np.ndarray:
    if not isinstance(v, list) or len(v) not in (2, 3) or not all(isinstance(c, list) and len(c) == 2 for c in v):
        raise SnarkjsFormatError(f"{field}: a G2 point is [[x.c0, x.c1], [y.c0, y.c1], [z.c0, z.c1]]")
    x, y = ([_num(e, field, FQ.modulus) for e in c] for c in v[:2])
    z = [_num(e, field, FQ.modulus) for e in v[2]] if len(v) == 3 else [1, 0]
    if z == [0, 0]:
        return G2.identity()
    if z != [1, 0]:
        raise SnarkjsFormatError(f"{field}: z = {z}; only affine points (z = [1, 0]) are accepted")
    return _check_point(G2, G2.from_ints((tuple(x), tuple(y))), field)


def _check_header(obj, what: str) -> None:
    if not isinstance(obj, dict):
        raise SnarkjsFormatError(f"{what}: expected a JSON object, got {type(obj).__name__}")
    if obj.get("protocol", "groth16") != "groth16":
        raise SnarkjsFormatError(f"{what}: protocol {obj.get('protocol')!r}; only groth16 is supported")
    curve = obj.get("curve", _CURVE)
    if curve != _CURVE:
        raise UnsupportedCurveError(f"{what}: curve {curve!r}; cuzk supports {_CURVE!r} only")


def _field(obj, key: str, what: str):
    if key not in obj:
        raise SnarkjsFormatError(f"{what}: missing field {key!r}")
    return obj[key]


def proof_to_json(proof: Proof) -> dict:
    """snarkjs's ``proof.json`` object for a cuzk proof."""
    return {"pi_a": _g1_json(proof.a), "pi_b": _g2_json(proof.b), "pi_c": _g1_json(proof.c),
            "protocol": "groth16", "curve": _CURVE}


def proof_from_json(obj, what: str = "proof") -> Proof:
    """A :class:`~cuzk.groth16.Proof` from snarkjs's ``proof.json`` object."""
    _check_header(obj, what)
    return Proof(a=_g1_from(_field(obj, "pi_a", what), f"{what}.pi_a"),
                 b=_g2_from(_field(obj, "pi_b", what), f"{what}.pi_b"),
                 c=_g1_from(_field(obj, "pi_c", what), f"{what}.pi_c"))


def public_to_json(public_inputs) -> list:
    """``public.json``: the public signals as decimal strings."""
    return [str(int(x)) for x in public_inputs]


def public_from_json(obj, what: str = "public signals") -> list[int]:
    """The public signals as ints in [0, r)."""
    if not isinstance(obj, list):
        raise SnarkjsFormatError(f"{what}: expected a JSON list of decimal strings")
    return [_num(v, f"{what}[{i}]", FR.modulus) for i, v in enumerate(obj)]


def vk_to_json(vk: VerifyingKey, *, alphabeta: bool = True) -> dict:
    """snarkjs's ``verification_key.json`` object (``vk_alphabeta_12`` = e(α, β) unless disabled)."""
    out = {"protocol": "groth16", "curve": _CURVE, "nPublic": vk.n_public,
           "vk_alpha_1": _g1_json(vk.alpha_g1), "vk_beta_2": _g2_json(vk.beta_g2),
           "vk_gamma_2": _g2_json(vk.gamma_g2), "vk_delta_2": _g2_json(vk.delta_g2)}
    if alphabeta:
        from cuzk.curve.pairing import pairing
        from cuzk.field import fq12

        e = fq12.to_ints(pairing(vk.alpha_g1, vk.beta_g2))
        out["vk_alphabeta_12"] = [[[str(c) for c in fq2] for fq2 in fq6] for fq6 in e]
    out["IC"] = [_g1_json(p) for p in vk.ic]
    return out


def vk_from_json(obj, what: str = "verification key") -> VerifyingKey:
    """A :class:`~cuzk.groth16.VerifyingKey` from ``verification_key.json``.

    The JSON has no β·G1 or δ·G1 (only provers use them): they are set to the identity.
    """
    _check_header(obj, what)
    ic = _field(obj, "IC", what)
    if not isinstance(ic, list) or not ic:
        raise SnarkjsFormatError(f"{what}: IC must be a non-empty list of G1 points")
    n_pub = obj.get("nPublic", len(ic) - 1)
    if n_pub != len(ic) - 1:
        raise SnarkjsFormatError(f"{what}: nPublic = {n_pub} but IC holds {len(ic)} points (expected nPublic + 1)")
    return VerifyingKey(
        alpha_g1=_g1_from(_field(obj, "vk_alpha_1", what), f"{what}.vk_alpha_1"),
        beta_g1=G1.identity(),
        beta_g2=_g2_from(_field(obj, "vk_beta_2", what), f"{what}.vk_beta_2"),
        gamma_g2=_g2_from(_field(obj, "vk_gamma_2", what), f"{what}.vk_gamma_2"),
        delta_g1=G1.identity(),
        delta_g2=_g2_from(_field(obj, "vk_delta_2", what), f"{what}.vk_delta_2"),
        ic=np.stack([_g1_from(p, f"{what}.IC[{i}]") for i, p in enumerate(ic)]),
    )


def loads_bounded(data, where: str, error: type[Exception] = SnarkjsFormatError):
    """``json.loads`` that refuses nesting deeper than :data:`MAX_JSON_DEPTH` (counted over
    brackets, strings included: an overestimate only for absurd files) and reports every
    decoding problem as ``error``.

    >>> loads_bounded('{"a": [1]}', "x")
    {'a': [1]}
    """
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise error(f"{where}: expected JSON text, got {type(data).__name__}")
    raw = np.frombuffer(data.encode() if isinstance(data, str) else bytes(data), dtype=np.uint8)
    step = np.isin(raw, (ord("["), ord("{"))).astype(np.int32) - np.isin(raw, (ord("]"), ord("}")))
    if raw.size and int(np.cumsum(step).max()) > MAX_JSON_DEPTH:
        raise error(f"{where}: not valid JSON (nested deeper than {MAX_JSON_DEPTH} levels)")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as e:  # bad JSON, bad UTF-8 (both ValueError), deep nesting
        raise error(f"{where}: not valid JSON ({type(e).__name__}: {str(e)[:200]})") from None


def _load(path):
    where = os.fspath(path)
    with open(path, "rb") as f:  # bytes: json detects UTF-8/16/32 itself, whatever the locale
        return loads_bounded(f.read(), where), where


def _dump(path, obj) -> None:
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def read_proof_json(path) -> Proof:
    """Read ``proof.json``.  Raises SnarkjsFormatError / UnsupportedCurveError."""
    obj, where = _load(path)
    return proof_from_json(obj, where)


def write_proof_json(path, proof: Proof) -> None:
    """Write ``proof.json`` (atomic)."""
    _dump(path, proof_to_json(proof))


def read_public_json(path) -> list[int]:
    """Read ``public.json``."""
    obj, where = _load(path)
    return public_from_json(obj, where)


def write_public_json(path, public_inputs) -> None:
    """Write ``public.json`` (atomic)."""
    _dump(path, public_to_json(public_inputs))


def read_vk_json(path) -> VerifyingKey:
    """Read ``verification_key.json``."""
    obj, where = _load(path)
    return vk_from_json(obj, where)


def write_vk_json(path, vk: VerifyingKey) -> None:
    """Write ``verification_key.json`` (atomic)."""
    _dump(path, vk_to_json(vk))

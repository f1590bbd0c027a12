"""snarkjs JSON: ``proof.json``, ``public.json``, ``verification_key.json`` (Groth16, BLS12-381 or bn128).

The curve is written as snarkjs names it (``"curve": "bn128"`` for BN254, ``"bls12381"``) from
the key or proof, and read back from the file: a proof or key of one curve comes back over
that curve (a file without ``"curve"`` is BLS12-381's, as before curves were data).

Numbers are decimal strings: ASCII digits only, as snarkjs writes them (JSON integers are read
too; a sign, whitespace, ``_`` or another script's digits are refused). A G1 point is
``[x, y, "1"]``, a G2 point ``[[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]`` (affine; snarkjs
writes the identity with z = 0, ``["0", "1", "0"]``). Readers check every point (reduced
coordinates, on the curve, in the subgroup) and raise :class:`~cuzk.errors.SnarkjsFormatError`
naming the field.

    >>> proof = read_proof_json("proof.json")                  # doctest: +SKIP
    >>> cuzk.groth16.verify(read_vk_json("verification_key.json"), read_public_json("public.json"), proof)   # doctest: +SKIP
    True
"""

from __future__ import annotations

import json
import os

import numpy as np

from cuzk import bounded_json
from cuzk.atomic_file import atomic_write
from cuzk import curves
from cuzk.errors import SnarkjsFormatError, UnsupportedCurveError
from cuzk.groth16.keys import VerifyingKey
from cuzk.groth16.proof import Proof
from cuzk.synth.binfile import snarkjs_name

__all__ = [
    "proof_to_json", "proof_json_text", "proof_from_json", "public_to_json", "public_json_text", "public_from_json",
    "vk_to_json", "vk_from_json",
    "read_proof_json", "write_proof_json", "read_public_json", "write_public_json", "read_vk_json", "write_vk_json",
    "loads_bounded", "MAX_JSON_DEPTH", "MAX_PUBLIC_INPUTS", "MAX_JSON_BYTES", "MAX_JSON_ITEMS",
]

#: Nesting refused beyond this depth (snarkjs JSON nests at most 4 deep, vk_alphabeta_12).
MAX_JSON_DEPTH = bounded_json.MAX_JSON_DEPTH

#: Most public inputs a ``public.json`` / ``verification_key.json`` may hold. Generous: circom
#: circuits and Filecoin's bellperson circuits have tens to a few thousand. It only sizes the
#: file limits below, so a 3 GiB file is refused before it is read.
MAX_PUBLIC_INPUTS = 1 << 16
# Bytes per element with room to spare for any indentation: snarkjs writes a public signal as
# ~82 bytes (78 digits, quotes, comma, newline, indent) and an IC point [x, y, "1"] as ~260.
_PUBLIC_ENTRY_BYTES = 256
_IC_ENTRY_BYTES = 512
# the fixed part: a proof (~800 bytes as snarkjs writes it), or a vk's header, alpha, beta,
# gamma, delta and the 12 Fq elements of vk_alphabeta_12 (~6 KiB)
_FIXED_BYTES = 64 << 10

#: File kind -> the most JSON values it can hold (commas + 1): a proof ~20, a vk ~60 fixed
#: values plus 3 per IC point (and the commas between points). Bounds the parsed objects.
MAX_JSON_ITEMS = {"proof": 256, "public": MAX_PUBLIC_INPUTS, "vk": 256 + 4 * (MAX_PUBLIC_INPUTS + 1)}

#: File kind -> (largest legitimate size in bytes, how that was derived). Larger files are
#: refused before they are read.
MAX_JSON_BYTES = {
    "proof": (_FIXED_BYTES, "the most a proof.json can legitimately take"),
    "public": (_FIXED_BYTES + _PUBLIC_ENTRY_BYTES * MAX_PUBLIC_INPUTS,
               f"the most a public.json of up to {MAX_PUBLIC_INPUTS} public inputs can take"),
    "vk": (_FIXED_BYTES + _IC_ENTRY_BYTES * (MAX_PUBLIC_INPUTS + 1),
           f"the most a verification_key.json for up to {MAX_PUBLIC_INPUTS} public inputs can take"),
}


def _num(v, field: str, modulus: int, label: str = "q") -> int:
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise SnarkjsFormatError(f"{field}: expected a decimal string, got {type(v).__name__}")
    if isinstance(v, str):
        # only what snarkjs writes: Python's int() would also read " 35\n", "+35", "3_5" and
        # other scripts' digits as 35, so a file snarkjs refuses would verify here
        if not (v.isascii() and v.isdigit()):
            raise SnarkjsFormatError(f"{field}: {v[:40]!r}{'...' if len(v) > 40 else ''} is not a decimal number "
                                     f"(ASCII digits only)")
        if len(v) > len(str(modulus)):  # before int(): its cost grows with the square of the length
            raise SnarkjsFormatError(f"{field}: a {len(v)}-digit number is outside [0, {label})")
    x = int(v)
    if not 0 <= x < modulus:
        text = str(x) if x.bit_length() <= 512 else f"a {x.bit_length()}-bit number"  # a JSON integer, any length
        raise SnarkjsFormatError(f"{field}: {text} is outside [0, {label})")
    return x


def _g1_json(p, curve: str) -> list:
    return _g1_text(curves.get(curve).G1.to_ints(p))


def _g1_text(xy) -> list:
    x, y = xy
    return ["0", "1", "0"] if x == y == 0 else [str(x), str(y), "1"]


def _g2_json(p, curve: str) -> list:
    return _g2_text(curves.get(curve).G2.to_ints(p))


def _g2_text(xy) -> list:
    x, y = xy
    if not any(x + y):
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    return [[str(x[0]), str(x[1])], [str(y[0]), str(y[1])], ["1", "0"]]


def _check_point(group, pt, field: str):
    if not group.is_on_curve(pt):
        raise SnarkjsFormatError(f"{field}: the point is not on the curve")
    if not group.is_in_subgroup(pt):
        raise SnarkjsFormatError(f"{field}: the point is not in the prime-order subgroup")
    return pt


def _g1_from(v, field: str, curve: str) -> np.ndarray:
    G1, q = curves.get(curve).G1, curves.resolve(curve).fq.modulus  # noqa: N806 (the group's name)
    if not isinstance(v, list) or len(v) not in (2, 3):
        raise SnarkjsFormatError(f"{field}: a G1 point is [x, y, z] (z = \"1\", or \"0\" for infinity)")
    xy = [_num(c, field, q) for c in v[:2]]
    z = _num(v[2], field, q) if len(v) == 3 else 1
    if z == 0:
        return G1.identity()
    if z != 1:
        raise SnarkjsFormatError(f"{field}: z = {z}; only affine points (z = 1) are accepted")
    return _check_point(G1, G1.from_ints(tuple(xy)), field)


def _g2_from(v, field: str, curve: str) -> np.ndarray:
    G2, q = curves.get(curve).G2, curves.resolve(curve).fq.modulus  # noqa: N806 (the group's name)
    if not isinstance(v, list) or len(v) not in (2, 3) or not all(isinstance(c, list) and len(c) == 2 for c in v):
        raise SnarkjsFormatError(f"{field}: a G2 point is [[x.c0, x.c1], [y.c0, y.c1], [z.c0, z.c1]]")
    x, y = ([_num(e, field, q) for e in c] for c in v[:2])
    z = [_num(e, field, q) for e in v[2]] if len(v) == 3 else [1, 0]
    if z == [0, 0]:
        return G2.identity()
    if z != [1, 0]:
        raise SnarkjsFormatError(f"{field}: z = {z}; only affine points (z = [1, 0]) are accepted")
    return _check_point(G2, G2.from_ints((tuple(x), tuple(y))), field)


def _check_header(obj, what: str) -> str:
    """The file's curve (canonical name), after checking the protocol."""
    if not isinstance(obj, dict):
        raise SnarkjsFormatError(f"{what}: expected a JSON object, got {type(obj).__name__}")
    if obj.get("protocol", "groth16") != "groth16":
        raise SnarkjsFormatError(f"{what}: protocol {obj.get('protocol')!r}; only groth16 is supported")
    curve = obj.get("curve", snarkjs_name(curves.DEFAULT))
    if not isinstance(curve, str):
        raise UnsupportedCurveError(f"{what}: curve {curve!r:.60} is not a curve name")
    try:
        return curves.canonical(curve)
    except UnsupportedCurveError as e:
        known = ", ".join(repr(snarkjs_name(c)) for c in curves.names())
        raise UnsupportedCurveError(f"{what}: curve {curve!r:.60}; cuzk supports {known}") from e


def _field(obj, key: str, what: str):
    if key not in obj:
        raise SnarkjsFormatError(f"{what}: missing field {key!r}")
    return obj[key]


def proof_to_json(proof: Proof) -> dict:
    """snarkjs's ``proof.json`` object for a cuzk proof (``"curve"`` from ``proof.curve``)."""
    # the three points in one conversion (Proof.coordinates): a daemon writes one per answer,
    # where per-point batch conversions were a large share of what cuzk serve adds to a tiny proof
    a, b, c = proof.coordinates()
    return {"pi_a": _g1_text(a), "pi_b": _g2_text(b), "pi_c": _g1_text(c),
            "protocol": "groth16", "curve": snarkjs_name(proof.curve)}


def proof_json_text(proof: Proof) -> str:
    """``json.dumps(proof_to_json(proof), separators=(",", ":"))``, written in one format step: a
    daemon writes one per answer right after the proof, with the interpreter's caches cold, where
    building the dict and encoding it took most of the answer's time (docs/perf/serve.md)."""
    (ax, ay), ((bx0, bx1), (by0, by1)), (cx, cy) = proof.coordinates()
    a = '"0","1","0"' if ax == ay == 0 else f'"{ax}","{ay}","1"'
    b = ('["0","0"],["1","0"],["0","0"]' if bx0 == bx1 == by0 == by1 == 0
         else f'["{bx0}","{bx1}"],["{by0}","{by1}"],["1","0"]')
    c = '"0","1","0"' if cx == cy == 0 else f'"{cx}","{cy}","1"'
    return f'{{"pi_a":[{a}],"pi_b":[{b}],"pi_c":[{c}],"protocol":"groth16","curve":"{snarkjs_name(proof.curve)}"}}'


def public_json_text(public_inputs) -> str:
    """``json.dumps(public_to_json(public_inputs), separators=(",", ":"))`` in one join."""
    return "[" + ",".join(f'"{int(x)}"' for x in public_inputs) + "]"


def proof_from_json(obj, what: str = "proof") -> Proof:
    """A :class:`~cuzk.groth16.Proof` from snarkjs's ``proof.json`` object, over its ``curve``."""
    c = _check_header(obj, what)
    return Proof(a=_g1_from(_field(obj, "pi_a", what), f"{what}.pi_a", c),
                 b=_g2_from(_field(obj, "pi_b", what), f"{what}.pi_b", c),
                 c=_g1_from(_field(obj, "pi_c", what), f"{what}.pi_c", c), curve=c)


def public_to_json(public_inputs) -> list:
    """``public.json``: the public signals as decimal strings."""
    return [str(int(x)) for x in public_inputs]


def public_from_json(obj, what: str = "public signals", *, curve: str | None = None) -> list[int]:
    """The public signals as ints in [0, r) of ``curve`` (default BLS12-381, whose r is the
    larger: ``verify`` checks them against its key's curve again)."""
    if not isinstance(obj, list):
        raise SnarkjsFormatError(f"{what}: expected a JSON list of decimal strings")
    r = curves.resolve(curves.canonical(curve)).fr.modulus
    return [_num(v, f"{what}[{i}]", r, "r") for i, v in enumerate(obj)]


def vk_to_json(vk: VerifyingKey, *, alphabeta: bool = True) -> dict:
    """snarkjs's ``verification_key.json`` object (``vk_alphabeta_12`` = e(α, β) unless disabled;
    ``"curve"`` from ``vk.curve``)."""
    c = vk.curve
    out = {"protocol": "groth16", "curve": snarkjs_name(c), "nPublic": vk.n_public,
           "vk_alpha_1": _g1_json(vk.alpha_g1, c), "vk_beta_2": _g2_json(vk.beta_g2, c),
           "vk_gamma_2": _g2_json(vk.gamma_g2, c), "vk_delta_2": _g2_json(vk.delta_g2, c)}
    if alphabeta:
        bundle = curves.get(c)
        e = bundle.module("fq12").to_ints(bundle.pairing.pairing(vk.alpha_g1, vk.beta_g2))
        out["vk_alphabeta_12"] = [[[str(x) for x in fq2] for fq2 in fq6] for fq6 in e]
    out["IC"] = [_g1_json(p, c) for p in vk.ic]
    return out


def vk_from_json(obj, what: str = "verification key") -> VerifyingKey:
    """A :class:`~cuzk.groth16.VerifyingKey` from ``verification_key.json``.

    The JSON has no β·G1 or δ·G1 (only provers use them): they are set to the identity.
    """
    c = _check_header(obj, what)
    G1 = curves.get(c).G1  # noqa: N806 (the group's name)
    ic = _field(obj, "IC", what)
    if not isinstance(ic, list) or not ic:
        raise SnarkjsFormatError(f"{what}: IC must be a non-empty list of G1 points")
    n_pub = obj.get("nPublic", len(ic) - 1)
    if n_pub != len(ic) - 1:
        raise SnarkjsFormatError(f"{what}: nPublic = {n_pub} but IC holds {len(ic)} points (expected nPublic + 1)")
    return VerifyingKey(
        alpha_g1=_g1_from(_field(obj, "vk_alpha_1", what), f"{what}.vk_alpha_1", c),
        beta_g1=G1.identity(),
        beta_g2=_g2_from(_field(obj, "vk_beta_2", what), f"{what}.vk_beta_2", c),
        gamma_g2=_g2_from(_field(obj, "vk_gamma_2", what), f"{what}.vk_gamma_2", c),
        delta_g1=G1.identity(),
        delta_g2=_g2_from(_field(obj, "vk_delta_2", what), f"{what}.vk_delta_2", c),
        ic=np.stack([_g1_from(p, f"{what}.IC[{i}]", c) for i, p in enumerate(ic)]),
        curve=c,
    )


def loads_bounded(data, where: str, error: type[Exception] = SnarkjsFormatError, *, max_bytes: int | None = None):
    """:func:`cuzk.bounded_json.loads_bounded` raising :class:`~cuzk.errors.SnarkjsFormatError`
    by default: nesting deeper than :data:`MAX_JSON_DEPTH` is refused in a streaming pass (no
    full-size copies) before ``json`` sees the text.

    >>> loads_bounded('{"a": [1]}', "x")
    {'a': [1]}
    """
    return bounded_json.loads_bounded(data, where, error, max_bytes=max_bytes)


def _load(path, kind: str):
    """Parse the file at ``path`` of ``kind`` ("proof", "public", "vk"), refused unread when it is
    larger than :data:`MAX_JSON_BYTES` allows for that kind."""
    limit, why = MAX_JSON_BYTES[kind]
    obj = bounded_json.read_json_file(path, SnarkjsFormatError, max_bytes=limit, max_items=MAX_JSON_ITEMS[kind], why=why)
    return obj, os.fspath(path)


def _dump(path, obj) -> None:
    with atomic_write(path, "w") as f:
        json.dump(obj, f, indent=1)


def read_proof_json(path) -> Proof:
    """Read ``proof.json``.  Raises SnarkjsFormatError / UnsupportedCurveError.

    Files larger than ``MAX_JSON_BYTES["proof"]`` (64 KiB) are refused before they are read."""
    obj, where = _load(path, "proof")
    return proof_from_json(obj, where)


def write_proof_json(path, proof: Proof) -> None:
    """Write ``proof.json`` (atomic)."""
    _dump(path, proof_to_json(proof))


def read_public_json(path, *, curve: str | None = None) -> list[int]:
    """Read ``public.json`` (values in [0, r) of ``curve``, default BLS12-381); files larger than
    ``MAX_JSON_BYTES["public"]`` (room for :data:`MAX_PUBLIC_INPUTS` signals) are refused before
    they are read."""
    obj, where = _load(path, "public")
    return public_from_json(obj, where, curve=curve)


def write_public_json(path, public_inputs) -> None:
    """Write ``public.json`` (atomic)."""
    _dump(path, public_to_json(public_inputs))


def read_vk_json(path) -> VerifyingKey:
    """Read ``verification_key.json``; files larger than ``MAX_JSON_BYTES["vk"]`` (room for
    :data:`MAX_PUBLIC_INPUTS` public inputs) are refused before they are read."""
    obj, where = _load(path, "vk")
    return vk_from_json(obj, where)


def write_vk_json(path, vk: VerifyingKey) -> None:
    """Write ``verification_key.json`` (atomic)."""
    _dump(path, vk_to_json(vk))

"""bellperson's Groth16 byte layouts: ``.vk`` and ``.params`` (DESIGN §6), plus a JSON vk.

Layout (every point uncompressed zcash encoding, counts u32 big-endian)::

    vk:      alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 | u32 n + ic[n]
    params:  vk | u32 + h[] | u32 + l[] | u32 + a[] | u32 + b_g1[] | u32 + b_g2[]

The layout is the keys' own (``ProvingKey.read``/``write``, ``VerifyingKey.to_bytes``/``from_bytes``),
implemented in :mod:`cuzk.groth16.bellperson_layout`; the functions here build on it.

Reading streams a file section by section and decodes points in bounded chunks, each split over
``threads`` threads (default: every core) running the ``nogil`` Numba decoder
(:mod:`cuzk.curve.validate`); every count is compared with the bytes left before anything is
allocated, so a corrupt count cannot make the reader allocate gigabytes. Like bellperson's
``Parameters::read``, a point at infinity is rejected in ``ic``, ``h``, ``l``, ``a``, ``b_g1``
and ``b_g2`` (bellperson stores those queries without infinities); cuzk also rejects it in the
six fixed vk elements, where no valid setup produces it. ``checked=True`` (default) checks
every point is on the curve and in the prime-order subgroup; ``checked=False`` keeps the
cheap on-curve check and skips the subgroup check, for trusted files. Every problem raises
:class:`cuzk.errors.ParamsFormatError` naming the field, the point index and the byte offset.

A ``.params`` file does not carry the circuit's density bitmaps or digest: attach them with
``ProvingKey.read(path, r1cs=synth.r1cs)`` (or ``pk.with_circuit``) before proving.

    >>> import io
    >>> from cuzk.curve import G1, G2
    >>> g1, g2 = G1.generator(), G2.generator()
    >>> vk = VerifyingKey(alpha_g1=g1, beta_g1=g1, beta_g2=g2, gamma_g2=g2, delta_g1=g1, delta_g2=g2, ic=[g1])
    >>> data = vk_to_bytes(vk)
    >>> len(data), vk_from_bytes(data) == vk, vk_from_json(vk_to_json(vk)) == vk
    (964, True, True)
"""

from __future__ import annotations

import io
import json
import struct

from cuzk.bounded_json import loads_bounded
from cuzk.curve import G1
from cuzk.curve.encoding import encoded_size
from cuzk.errors import ParamsFormatError
from cuzk.formats.snarkjs_json import MAX_PUBLIC_INPUTS
from cuzk.groth16 import bellperson_layout
from cuzk.groth16.keys import ProvingKey, VerifyingKey

__all__ = [
    "check_params_layout",
    "vk_to_bytes", "vk_from_bytes", "write_params", "read_params", "vk_to_json", "vk_from_json",
    "VK_FIXED", "PARAMS_QUERIES", "MAX_VK_BYTES",
]

#: The six fixed vk elements, in file order, with their groups.
VK_FIXED = bellperson_layout.vk_fixed()
#: The proving-key queries after the vk, in file order.
PARAMS_QUERIES = bellperson_layout.params_queries()

_U32 = struct.Struct(">I")
# vk JSON: ~1.2 KiB of fixed points, then ~200 characters per ic point (192 hex digits, quotes,
# comma, indent); the bounds leave room for any whitespace, for up to MAX_PUBLIC_INPUTS inputs
_VK_JSON_BYTES = (64 << 10) + 256 * (MAX_PUBLIC_INPUTS + 1)
_VK_JSON_ITEMS = 64 + MAX_PUBLIC_INPUTS + 1


def _usize(group) -> int:
    return encoded_size(group, compressed=False)


#: The largest ``.vk`` file: the fixed points, the ic count and ONE's point plus one per public
#: input, for up to ``MAX_PUBLIC_INPUTS`` of them (a larger file is refused before it is read).
MAX_VK_BYTES = sum(_usize(g) for _, g in VK_FIXED) + _U32.size + _usize(G1) * (MAX_PUBLIC_INPUTS + 1)


# ---------------------------------------------------------------------------- binary
def vk_to_bytes(vk: VerifyingKey) -> bytes:
    """bellperson ``.vk`` bytes: 6 fixed points, then u32-BE count and the IC points.

    Raises:
        ParamsFormatError: not a verifying key, or a point the layout forbids (infinity).
        UnsupportedCurveError: the key is over a curve without zcash encodings (BN254).

    >>> from cuzk.curve import G1, G2
    >>> g1, g2 = G1.generator(), G2.generator()
    >>> vk = VerifyingKey(alpha_g1=g1, beta_g1=g1, beta_g2=g2, gamma_g2=g2, delta_g1=g1, delta_g2=g2, ic=[g1, g1])
    >>> len(vk_to_bytes(vk)) == 3 * 96 + 3 * 192 + 4 + 2 * 96
    True
    """
    if not isinstance(vk, VerifyingKey):
        raise ParamsFormatError(f"expected a cuzk.groth16.VerifyingKey, got {type(vk).__name__}")
    return bellperson_layout.vk_to_bytes(vk)


def write_params(pk: ProvingKey, path) -> None:
    """Write ``pk`` as a bellperson ``.params`` file, atomically (temp file in the same folder,
    then rename), so a crash never leaves a half-written file under ``path``.

    Raises:
        ParamsFormatError: not a proving key, a key not of the "bellperson" H convention (its
            ``h`` query would be misread by bellperson provers), or a query holding a point at
            infinity.

    >>> pk.write("circuit.params")           # doctest: +SKIP
    """
    if not isinstance(pk, ProvingKey):
        raise ParamsFormatError(f"expected a cuzk.groth16.ProvingKey, got {type(pk).__name__}")
    if not isinstance(pk.vk, VerifyingKey):
        raise ParamsFormatError(f"expected a cuzk.groth16.VerifyingKey, got {type(pk.vk).__name__}")
    bellperson_layout.write_params(pk, path)


def vk_from_bytes(data, *, checked: bool = True, threads=None) -> VerifyingKey:
    """Parse bellperson ``.vk`` bytes (or a binary file / path holding exactly that) into a
    :class:`~cuzk.groth16.VerifyingKey`; arguments and errors as for
    :func:`cuzk.groth16.bellperson_layout.read_vk`, which reads them.
    """
    return VerifyingKey(**bellperson_layout.read_vk(data, checked=checked, threads=threads))


def read_params(source, *, checked: bool = True, threads=None) -> ProvingKey:
    """Read a bellperson ``.params`` file (path, bytes or seekable binary file object).

    The key comes back with ``density=None`` and ``digest=None`` (the file has neither); attach
    the circuit with ``pk.with_circuit(r1cs)`` before proving with sparse A/B queries.

    Arguments and errors as for :func:`cuzk.groth16.bellperson_layout.read_params`, which reads
    the file.

    >>> pk = read_params("circuit.params").with_circuit(synth.r1cs)    # doctest: +SKIP
    """
    return ProvingKey.read(source, checked=checked, threads=threads)


# ---------------------------------------------------------------------------- JSON
def vk_to_json(vk: VerifyingKey) -> str:
    """Human-readable vk: each point as the hex of its uncompressed zcash encoding.

    >>> from cuzk.curve import G1, G2
    >>> g1, g2 = G1.generator(), G2.generator()
    >>> vk = VerifyingKey(alpha_g1=g1, beta_g1=g1, beta_g2=g2, gamma_g2=g2, delta_g1=g1, delta_g2=g2, ic=[g1])
    >>> sorted(json.loads(vk_to_json(vk)))[:3]
    ['alpha_g1', 'beta_g1', 'beta_g2']
    """
    data = vk_to_bytes(vk)  # one encoder, so JSON and binary cannot disagree
    doc, off = {"protocol": "groth16", "curve": "bls12-381", "encoding": "zcash-uncompressed"}, 0
    for name, group in VK_FIXED:
        doc[name] = data[off : off + _usize(group)].hex()
        off += _usize(group)
    off += 4
    doc["ic"] = [data[off + i * 96 : off + (i + 1) * 96].hex() for i in range(vk.ic.shape[0])]
    return json.dumps(doc, indent=1)


def vk_from_json(text: str, *, checked: bool = True) -> VerifyingKey:
    """Inverse of :func:`vk_to_json` (same checks as :func:`vk_from_bytes`).

    Raises:
        ParamsFormatError: not JSON (nesting deeper than 64 levels, or larger than a vk for
            ``MAX_PUBLIC_INPUTS`` public inputs can be, included), a missing or non-hex field,
            or a bad point.
    """
    doc = loads_bounded(text, "verifying-key JSON", ParamsFormatError, max_bytes=_VK_JSON_BYTES,
                        max_items=_VK_JSON_ITEMS)
    try:
        if not isinstance(doc.get("ic"), list):
            raise TypeError("ic must be a list of hex strings")
        parts = [bytes.fromhex(doc[name]) for name, _ in VK_FIXED]
        ic = [bytes.fromhex(x) for x in doc["ic"]]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ParamsFormatError(f"verifying-key JSON must hold hex fields {[n for n, _ in VK_FIXED]} and an ic list: {e!r}") from e
    for (name, group), raw in zip(VK_FIXED, parts):
        if len(raw) != _usize(group):
            raise ParamsFormatError(f"verifying-key JSON: {name} must be {_usize(group)} bytes of hex, got {len(raw)}")
    for i, raw in enumerate(ic):
        if len(raw) != _usize(G1):
            raise ParamsFormatError(f"verifying-key JSON: ic[{i}] must be {_usize(G1)} bytes of hex, got {len(raw)}")
    return vk_from_bytes(b"".join(parts) + _U32.pack(len(ic)) + b"".join(ic), checked=checked)


def check_params_layout(f, where: str) -> None:
    """Check a .params file's length prefixes against its size without reading its points.

    Lets a caller refuse a file that is not a bellperson parameter file before hashing it.

    Raises:
        ParamsFormatError: a count that needs more bytes than the file has, or trailing bytes.
    """
    size = f.seek(0, io.SEEK_END)
    pos = sum(encoded_size(g, compressed=False) for _, g in VK_FIXED)
    for field, group in (("ic", G1), *PARAMS_QUERIES):
        f.seek(pos)
        raw = f.read(4)
        if len(raw) < 4:
            raise ParamsFormatError(f"{where}: truncated before the {field} count at byte offset {pos} "
                                    f"(the file has {size} bytes)")
        n = int.from_bytes(raw, "big")
        if field == "ic" and n == 0:
            raise ParamsFormatError(f"{where}: ic count is 0 at byte offset {pos}; it must hold ONE's point")
        need = n * encoded_size(group, compressed=False)
        if pos + 4 + need > size:
            raise ParamsFormatError(f"{where}: {field} count {n} at byte offset {pos} needs {need} bytes of points, "
                                    f"only {size - pos - 4} left in the file")
        pos += 4 + need
    if pos != size:
        raise ParamsFormatError(f"{where}: {size - pos} trailing bytes after b_g2 at byte offset {pos}")

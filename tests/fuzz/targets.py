"""The readers the fuzzer drives: one :class:`Target` per reader, in :data:`TARGETS`.

A target names its seed kind (:mod:`.seeds`), its byte format (which format-aware mutations of
:mod:`.mutate` apply), how to read one input (from bytes, or from a file holding them), and an
oracle that judges an *accepted* input: ``None`` when fine, else a sentence saying what is wrong
(e.g. a mutated proof that verifies for the seed's statement). An oracle may raise a
``cuzk.errors`` exception (a clean refusal while using the result) but nothing else.

Adding a reader is one :func:`register` call, e.g. the Engine's key-cache file::

    register(Target("keycache", kind="keycache", fmt="raw", read=lambda p: KeyCache.load(p),
                    oracle=lambda key, ctx: ctx.vk_oracle(key.vk, "bp")))

(and a seed kind in :mod:`.seeds` that writes such a file with cuzk's own writer).

    >>> sorted(TARGETS)[:3]
    ['bp_params', 'bp_proof', 'bp_proof_json']
"""

from __future__ import annotations

import functools
import os
from typing import Any, Callable

import attrs

from . import seeds as S

__all__ = ["Target", "TARGETS", "register", "Context"]


@attrs.frozen
class Target:
    """One reader under test."""

    name: str  #: unique, used on the command line (``--targets``)
    kind: str  #: seed kind (a folder of the seed dir)
    fmt: str  #: byte format for format-aware mutations: raw, container, bellperson, json, jsonl, pce
    read: Callable[[Any], Any]  #: parses one input: a path (``from_file``) or bytes
    oracle: Callable[[Any, "Context"], str | None] | None = None  #: judges an accepted result
    from_file: bool = True  #: read takes a path to a file holding the input (else the bytes)


TARGETS: dict[str, Target] = {}


def register(target: Target) -> Target:
    """Add ``target`` to :data:`TARGETS` (names are unique)."""
    if target.name in TARGETS:
        raise ValueError(f"fuzz target {target.name!r} is registered twice")
    TARGETS[target.name] = target
    return target


class Context:
    """What oracles compare against, read (once, lazily) from the seed dir with cuzk's readers."""

    def __init__(self, seed_dir):
        self.seed_dir = seed_dir

    @functools.cached_property
    def bp(self):
        """bellperson convention: (vk, proof, public) per circuit."""
        from cuzk.formats import bellperson
        from cuzk.groth16 import Proof

        out = []
        for c, vk_p, pr_p in zip(S.CIRCUITS, S.seed_files(self.seed_dir, "bp_vk"), S.seed_files(self.seed_dir, "bp_proof")):
            with open(pr_p, "rb") as f:
                proof = Proof.from_bytes(f.read())
            out.append((bellperson.vk_from_bytes(vk_p, threads=1), proof, S.statement(self.seed_dir, c)["public"]))
        return out

    @functools.cached_property
    def sj(self):
        """snarkjs convention: (vk, proof, public) per circuit."""
        from cuzk.formats import snarkjs_json as J

        return [(J.read_vk_json(v), J.read_proof_json(p), J.read_public_json(u)) for v, p, u in
                zip(*(S.seed_files(self.seed_dir, k) for k in ("sj_vk", "sj_proof", "sj_public")))]

    @functools.cached_property
    def zkey(self):
        from cuzk.formats import snarkjs

        return snarkjs.read_zkey(S.seed_files(self.seed_dir, "zkey")[0], threads=1)

    def warm(self) -> None:
        """Run every code path the oracles may take once (the worker's warm-up calls this), so a
        first pairing's cache loading is part of the baseline, not of some input's memory."""
        from cuzk.groth16 import verify

        for conv in ("bp", "sj"):
            for vk, proof, public in self.statements(conv):
                verify(vk, public, proof)
                verify(vk, _other(public), proof)
        from cuzk.formats import snarkjs

        self.zkey.witness(snarkjs.read_wtns(S.seed_files(self.seed_dir, "wtns")[0]))

    def statements(self, conv: str):
        return self.bp if conv == "bp" else self.sj

    last_input: bytes = b""  #: the bytes being read (the worker sets it): the bincode oracles compare with it

    @functools.cached_property
    def c1_seeds(self) -> list:
        from cuzk.circuits.filecoin.porep.c1 import SealCommitPhase1Output

        return [SealCommitPhase1Output.read(p) for p in S.seed_files(self.seed_dir, "porep_c1")]

    @functools.cached_property
    def snap_seeds(self) -> list:
        """(proof, params, statement) of each SnapDeals seed."""
        from cuzk.circuits.filecoin.update import PartitionProof, update_params

        params = update_params(2048)
        out = []
        for c, p in zip(S.CIRCUITS, S.seed_files(self.seed_dir, "snap_vanilla")):
            with open(p, "rb") as f:
                out.append((PartitionProof.from_bincode(f.read()), params, S.snap_statement(self.seed_dir, c)))
        return out

    # -- oracles shared by several targets ----------------------------------------------
    def proof_oracle(self, proof, conv: str) -> str | None:
        """A mutated proof may verify only for a seed's own statement: never for other public
        inputs, nor for two statements. (A proof that verifies for its own statement is fine:
        Groth16 proofs are malleable, e.g. (-A, -B, C) verifies wherever (A, B, C) does, and a
        sign-bit flip of A and B produces exactly that.)"""
        from cuzk.groth16 import verify

        holds = 0
        for vk, _, public in self.statements(conv):
            if verify(vk, _other(public), proof):
                return f"a mutated proof verifies for public inputs {_other(public)} (not the seed's)"
            holds += verify(vk, public, proof)
        return "a mutated proof verifies for two different statements" if holds > 1 else None

    def public_oracle(self, public, conv: str) -> str | None:
        """Mutated public inputs may verify only if they equal the seed's."""
        from cuzk.groth16 import verify

        for vk, proof, orig in self.statements(conv):
            if len(public) == len(orig) and public != orig and verify(vk, public, proof):
                return f"the seed proof verifies for other public inputs {public}"
        return None

    def vk_oracle(self, vk, conv: str) -> str | None:
        """A mutated vk must not verify a seed proof for other public inputs."""
        from cuzk.groth16 import verify

        for _, proof, public in self.statements(conv):
            if vk.ic.shape[0] != len(public) + 1:
                continue
            other = _other(public)
            if verify(vk, other, proof):
                return f"an accepted vk verifies the seed proof for public inputs {other}"
        return None


def _other(public: list) -> list:
    """Public inputs of another statement: the first one plus 1 (mod r)."""
    from cuzk.field import FR

    return [(public[0] + 1) % FR.modulus, *public[1:]]


def _read_points(group, compressed):
    def read(data):
        from cuzk.curve.encoding import points_from_bytes

        return points_from_bytes(group, data, compressed=compressed), data
    return read


def _points_canonical(group, compressed):
    """Accepted points are on the curve, in the subgroup, and re-encode to the input (canonical)."""
    def check(result, ctx) -> str | None:
        from cuzk.curve.encoding import points_to_bytes

        pts, data = result
        if not (group.is_on_curve(pts).all() and group.is_in_subgroup(pts).all()):
            return "an accepted point is off the curve or outside the subgroup"
        if points_to_bytes(group, pts, compressed=compressed) != bytes(data):
            return "an accepted encoding is not canonical (re-encoding differs)"
        return None
    return check


def _timeline_use(tl, ctx) -> None:
    tl.summary()
    tl.waterfall()
    tl.to_chrome_trace()
    tl.spans()
    tl.jobs()


def _pce_use(synth, ctx) -> None:
    # a PCE that loads must synthesize (or refuse cleanly) with the circuits' inputs, and with
    # check=True a witness that comes out satisfies every row
    for c in S.CIRCUITS:
        try:
            synth.synthesize_inputs(S.statement(ctx.seed_dir, c)["inputs"], check=True)
        except Exception as e:  # only cuzk errors are allowed: re-raise the rest
            from cuzk.errors import CuzkError

            if not isinstance(e, CuzkError):
                raise


def _wtns_use(z, ctx) -> None:
    ctx.zkey.witness(z)  # KeyMismatchError/InputError are clean; anything else is a defect


def _r1cs_use(r1cs, ctx) -> None:
    # rows only: anything sized by n_vars (Density, setup) is sized by the header's claim, which
    # a 500-byte file can make 2^32 (see the wire-label check in cuzk.synth.r1cs)
    r1cs.rows_as_ints()


def _read_record(data: bytes):
    from cuzk.engine.keysource import SourceRecord

    return SourceRecord.parse(data, "source record")


_DATA_END = __import__("re").compile(rb'"data_end":\s*(\d{1,9})')
_MAX_DATA = 256 << 10  # a seed table names ~5 KB of data; a mutated one may name more, up to this


def _read_table(path: str):
    """The table in ``path`` (a cache entry's JSON table, as mutated) behind a correct preamble
    and digest and a zero data region of the size it names, read as a cache file a process has
    checked before (so the data checksums, which zeros fail, do not hide the table's checks:
    the situation of a file edited in place after its load)."""
    import hashlib
    import struct

    from cuzk.engine.keyfile import FORMAT_VERSION, MAGIC, file_identity, read_keyfile
    from cuzk.errors import KeyCacheFormatError

    with open(path, "rb") as f:
        table = f.read()
    m = _DATA_END.search(table)
    data_end = int(m.group(1)) if m else 64
    del m  # a match keeps the searched bytes alive
    if not 64 <= data_end <= _MAX_DATA:
        raise KeyCacheFormatError(f"data_end {data_end} outside what the harness backs")
    entry = path + ".cuzkkey"
    if os.path.exists(entry):  # a new inode: never truncate a file an earlier input's result may still map
        os.unlink(entry)
    pre = struct.pack("<8sIIQQ32s", MAGIC, FORMAT_VERSION, 0, data_end, len(table), hashlib.sha256(table).digest())
    with open(entry, "wb") as f:
        f.write(pre)
        f.truncate(data_end)
        f.seek(data_end)
        f.write(table)
    del table  # only the reader's own memory counts
    return read_keyfile(entry, verified={file_identity(entry)})


def _table_use(kf, ctx) -> None:
    # what the key cache does with an entry's arrays: a proving key, or a KeyCacheFormatError
    from cuzk.engine.keyarrays import key_from_arrays

    for a in kf.arrays.values():
        a.sum()  # every byte of every array lies inside the mapping
    key_from_arrays(kf.arrays, kf.meta.get("key", {}))


def _none(fn):
    """An oracle that only *uses* the result (``fn`` raises on trouble) and finds nothing wrong."""
    def check(obj, ctx):
        fn(obj, ctx)
        return None
    return check


def _register_all() -> None:
    from cuzk.curve import G1, G2
    from cuzk.formats import bellperson, snarkjs, snarkjs_json as J
    from cuzk.groth16 import Proof
    from cuzk.synth import Synthesizer
    from cuzk.timeline import Timeline

    register(Target("bp_params", "bp_params", "bellperson", lambda p: bellperson.read_params(p, threads=1),
                    lambda pk, ctx: ctx.vk_oracle(pk.vk, "bp")))
    register(Target("bp_vk", "bp_vk", "bellperson", lambda p: bellperson.vk_from_bytes(p, threads=1),
                    lambda vk, ctx: ctx.vk_oracle(vk, "bp")))
    register(Target("bp_vk_json", "bp_vk_json", "json", bellperson.vk_from_json,
                    lambda vk, ctx: ctx.vk_oracle(vk, "bp"), from_file=False))
    register(Target("bp_proof", "bp_proof", "raw", Proof.from_bytes,
                    lambda pr, ctx: ctx.proof_oracle(pr, "bp"), from_file=False))
    register(Target("bp_proof_multi", "bp_proof", "raw", Proof.split,
                    lambda prs, ctx: next(filter(None, (ctx.proof_oracle(p, "bp") for p in prs)), None),
                    from_file=False))
    register(Target("bp_proof_json", "bp_proof_json", "json", Proof.from_json,
                    lambda pr, ctx: ctx.proof_oracle(pr, "bp"), from_file=False))
    register(Target("zkey", "zkey", "container", lambda p: snarkjs.read_zkey(p, threads=1),
                    lambda pk, ctx: ctx.vk_oracle(pk.vk, "sj")))
    register(Target("wtns", "wtns", "container", snarkjs.read_wtns, _none(_wtns_use)))
    register(Target("r1cs", "r1cs", "container", snarkjs.read_r1cs, _none(_r1cs_use)))
    register(Target("sj_proof", "sj_proof", "json", J.read_proof_json, lambda pr, ctx: ctx.proof_oracle(pr, "sj")))
    register(Target("sj_public", "sj_public", "json", J.read_public_json, lambda pub, ctx: ctx.public_oracle(pub, "sj")))
    register(Target("sj_vk", "sj_vk", "json", J.read_vk_json, lambda vk, ctx: ctx.vk_oracle(vk, "sj")))
    register(Target("pce", "pce", "pce", lambda p: Synthesizer.load(p), _none(_pce_use)))
    register(Target("timeline", "timeline", "jsonl", Timeline.load, _none(_timeline_use)))
    register(Target("kc_record", "kc_record", "json", _read_record, from_file=False))
    register(Target("kc_table", "kc_table", "json", _read_table, _none(_table_use)))
    for tag, group in (("g1", G1), ("g2", G2)):
        for suffix, comp in (("c", True), ("u", False)):
            register(Target(f"{tag}{suffix}", f"{tag}{suffix}", "raw", _read_points(group, comp),
                            _points_canonical(group, comp), from_file=False))
    _register_filecoin()


def _register_filecoin() -> None:
    """What storage providers send: a C1 output (``cuzk serve``'s PoRep payload, ``cuzk porep c2``),
    SnapDeals partition proofs and WindowPoSt sector proofs (bincode)."""
    from cuzk.circuits.filecoin.porep.c1 import SealCommitPhase1Output
    from cuzk.circuits.filecoin.update import PartitionProof
    from cuzk.circuits.filecoin.vanilla import FALLBACK_POST_SECTOR_PROOF, from_bincode, to_bincode

    register(Target("porep_c1", "porep_c1", "json", SealCommitPhase1Output.from_json, _c1_oracle, from_file=False))
    register(Target("snap_vanilla", "snap_vanilla", "raw", PartitionProof.from_bincode, _snap_oracle, from_file=False))
    register(Target("post_vanilla", "post_vanilla", "raw", lambda d: from_bincode(FALLBACK_POST_SECTOR_PROOF, d),
                    lambda p, ctx: _canonical(to_bincode(FALLBACK_POST_SECTOR_PROOF, p), ctx.last_input),
                    from_file=False))


def _canonical(again: bytes, data: bytes) -> str | None:
    """bincode has one encoding per value: an accepted input re-encodes to itself."""
    return None if again == data else f"an accepted input re-encodes to other bytes ({len(again)} vs {len(data)})"


def _c1_oracle(c1, ctx) -> str | None:
    """A C1 that passes ``check()`` (every path, label and encoding recomputed) must be a seed's,
    up to its ticket (which only the replica id, not in the document, binds)."""
    import attrs

    from cuzk.circuits.filecoin.porep.c1 import SealCommitPhase1Output

    if SealCommitPhase1Output.from_json(c1.to_json()) != c1:
        return "an accepted C1 does not survive its own JSON round trip"
    c1.check()  # a VanillaFormatError here is a clean refusal
    if not any(attrs.evolve(c1, ticket=seed.ticket) == seed for seed in ctx.c1_seeds):
        return "a C1 unlike either seed passed check()"
    return None


def _snap_oracle(proof, ctx) -> str | None:
    """Canonical bincode, and a proof that passes the vanilla check of a seed's statement is that
    seed's proof."""
    from cuzk.circuits.filecoin.update import verify_partition_proof

    bad = _canonical(proof.to_bincode(), ctx.last_input)
    if bad:
        return bad
    for seed, params, st in ctx.snap_seeds:
        if verify_partition_proof(params, proof, k=0, **st) and proof != seed:
            return "a mutated SnapDeals proof passes the vanilla check of a seed's statement"
    return None


_register_all()

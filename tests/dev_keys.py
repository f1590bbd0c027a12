"""Development keys of Filecoin circuits for the daemon's slow tests, made once per machine.

A 2 KiB PoRep or SnapDeals key takes minutes of setup on two cores (2.7M and 1.7M
constraints), and the daemon's first load of a fresh ``.params`` file is a read with every curve
point checked, which takes longer still. :func:`dev_param_cache` returns a folder that is a
param cache holding the key cuzk's setup makes for a circuit with a given seed, under
Filecoin's v28 names (``<name>.params``, ``<name>.vk``), and beside them ``keys/``: a key cache
already holding that key, filled from the key in memory when it was made (a key the tests made
themselves needs no point check). A daemon configured with ``param_cache`` = the folder and
``key_cache`` = its ``keys/`` finds the file by its v28 name and maps it from the cache, as a
daemon that loaded it before would.

Folders live under ``$XDG_CACHE_HOME/cuzk/dev-keys`` (``~/.cache`` when unset), named
``<circuit id>-<R1CS digest>-seed<seed>``: a circuit whose constraints change gets a new key,
and older folders of the same circuit id are removed when it is made (each holds about twice
the key's size: the ``.params`` file and its cache entry). A folder appears whole, by rename,
or not at all; a file lock keeps parallel workers from making one twice. Setup is deterministic
for a seed, so a folder made on another day holds the same key.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path
from unittest import mock

import numpy as np

import cuzk

__all__ = ["dev_keys", "dev_param_cache", "dev_root"]


def dev_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cuzk" / "dev-keys"


def _adopt(key_cache: Path, path: Path, pk) -> None:
    """Fill ``key_cache`` with ``pk``, the key just written to ``path``, exactly as a first load
    of ``path`` would after its checked read (the cache's hashing, file format and mapping run)."""
    from cuzk.engine import keycache

    with mock.patch.object(keycache, "checked_read", lambda *_args, **_kw: pk):
        _, info = keycache.KeyCache(key_cache).load(path)
    if info.path is None:
        raise RuntimeError(f"the key cache {key_cache} did not store {path}: {info.note}")


def _make(folder: Path, fc, synth, seed: int):
    pk, vk = cuzk.groth16.setup(synth.r1cs, rng=np.random.default_rng(seed))
    folder.mkdir(parents=True)
    pk.write(folder / fc.params_name)
    (folder / fc.vk_name).write_bytes(vk.to_bytes())
    _adopt(folder / "keys", folder / fc.params_name, pk)


def dev_param_cache(circuit_id: str, seed: int):
    """``(folder, vk)``: a param cache with the development key of ``circuit_id`` (a Filecoin id
    such as ``snap-2k``) made with ``seed``, its ``keys/`` a key cache holding it; made when missing."""
    from cuzk.formats.bellperson import vk_from_bytes
    from cuzk.serve.filecoin import filecoin_circuit

    fc = filecoin_circuit(circuit_id)
    synth = cuzk.Synthesizer(fc.circuit())
    root = dev_root()
    folder = root / f"{circuit_id}-{synth.r1cs.digest[:16]}-seed{seed}"
    if not (folder / fc.vk_name).is_file():
        root.mkdir(parents=True, exist_ok=True)
        with open(root / f"{circuit_id}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be making the same key
            if not (folder / fc.vk_name).is_file():
                for old in root.glob(f"{circuit_id}-*"):  # other circuit versions, or an interrupted make
                    shutil.rmtree(old, ignore_errors=True)
                partial = root / f"{folder.name}.partial"
                _make(partial, fc, synth, seed)
                os.replace(partial, folder)
    return folder, vk_from_bytes((folder / fc.vk_name).read_bytes())


def dev_keys(circuit_id: str, seed: int, r1cs):
    """``(pk, vk)``: the development key of ``circuit_id`` with ``seed`` (made when missing, as
    :func:`dev_param_cache`), mapped from its key cache: a test that proves the circuit itself
    shares the daemon tests' key instead of running minutes of setup of its own. ``r1cs`` is the
    test's own circuit, which must be the one the key was made for."""
    from cuzk.engine import keycache
    from cuzk.serve.filecoin import filecoin_circuit

    folder, vk = dev_param_cache(circuit_id, seed)
    if not folder.name.startswith(f"{circuit_id}-{r1cs.digest[:16]}-"):
        raise RuntimeError(f"{circuit_id}: the test's circuit (digest {r1cs.digest[:16]}) is not the one of {folder}")
    pk, _ = keycache.KeyCache(folder / "keys").load(folder / filecoin_circuit(circuit_id).params_name)
    return pk, vk

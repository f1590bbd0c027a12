"""SnapDeals challenges: which nodes a partition proves, derived from ``comm_r_new``.

As storage-proofs-update's ``Challenges`` draws them: digest ``j`` of the whole proof is
``H_custom(comm_r_new, j)`` (:mod:`.randomness`); its 255 little-endian bits are cut into
``floor(254 / b)`` challenges of ``b = log2(nodes) - log2(partitions)`` random bits each (least
significant first), and partition ``k``'s index is appended as the top bits, so every challenge of
partition ``k`` lies in its slice of the sector. Partition ``k`` starts at digest
``k * ceil(challenge_count / per_digest)`` and takes ``challenge_count`` challenges. The
Poseidon variant draws ``challenge_count * partitions`` challenges of ``log2(nodes)`` bits from
digest 0 on.

    >>> from cuzk.circuits.filecoin.update.params import update_params
    >>> p = update_params(32 << 30)
    >>> c = partition_challenges(p, 12345, 15)
    >>> len(c), all(x >> 26 == 15 for x in c)
    (86, True)
"""

from __future__ import annotations

from cuzk.circuits.filecoin.poseidon import _field_ints
from cuzk.circuits.filecoin.update.randomness import gen_randomness

__all__ = ["CAPACITY", "challenges_per_digest", "digests_per_partition", "partition_challenges"]

CAPACITY = 254  #: Fr::CAPACITY: the digest bits challenges are cut from


def challenges_per_digest(bits_per_challenge: int) -> int:
    return CAPACITY // bits_per_challenge


def digests_per_partition(challenge_count: int, bits_per_challenge: int) -> int:
    per = challenges_per_digest(bits_per_challenge)
    return -(-challenge_count // per)


def partition_challenges(params, comm_r_new, k: int = 0) -> list[int]:
    """Partition ``k``'s challenged nodes, in order (the Poseidon variant's when ``params.poseidon``).

    Raises:
        InputError: ``k`` outside the partitions; ``comm_r_new`` not a canonical field element.
    """
    k = params.check_partition(k)
    (comm_r_new,) = _field_ints([comm_r_new], "comm_r_new")
    b = params.random_bits_per_challenge
    per = challenges_per_digest(b)
    digest = k * digests_per_partition(params.challenge_count, b)
    top = k << b
    out: list[int] = []
    while len(out) < params.challenge_count:
        bits = gen_randomness(comm_r_new, digest)
        take = min(per, params.challenge_count - len(out))
        out += [(bits >> (i * b)) & ((1 << b) - 1) | top for i in range(take)]
        digest += 1
    return out

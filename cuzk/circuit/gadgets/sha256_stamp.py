"""SHA-256 whose compressions are traced once and stamped: the same rows, variables and witness
as :func:`cuzk.circuit.gadgets.sha256`, at the compile speed of ``cs.repeat``.

``cs.repeat`` needs every instance's arguments before it records them, but block ``i + 1`` of a
hash reads block ``i``'s output. So a :class:`Sha256Stamper` traces a compression once per
*shape* (which of its 768 input bits — 512 message bits and 256 chaining bits — are variables,
negations or constants, and which of them repeat a variable) and records every later block of
that shape as a one-instance block of the same template
(:class:`~cuzk.circuit.template_cache.TemplateCache`; the compile builds each template's
fragment once, docs/circuits.md "Repeated sub-circuits"). Blocks whose inputs are all constants
fold to constants and are traced by hand, as bellperson does. The compression is
:mod:`cuzk.circuit.gadgets.sha256_bits`', as for the unstamped gadget.

Share one stamper between hashes (every label of a StackedCircuit) so their blocks share
templates; each block runs in the namespace ``block i`` like :func:`sha256`'s.

    >>> from cuzk.circuit import ConstraintSystem
    >>> from cuzk.circuit.gadgets.bit import Boolean
    >>> cs = ConstraintSystem()
    >>> bits = [Boolean.alloc(cs, i % 2) for i in range(8)]
    >>> st = Sha256Stamper(cs)
    >>> out = st.sha256(bits) + st.sha256(bits[::-1])   # the second hash reuses the template
    >>> cs.n_constraints - 8, st.traced                  # two one-block hashes, constants folded
    (48740, 1)
"""

from __future__ import annotations

from cuzk.circuit.gadgets import sha256_bits as _bits
from cuzk.circuit.gadgets.sha256 import from_bare, to_bare, words_from_bare, words_to_bare
from cuzk.circuit.template_cache import TemplateCache
from cuzk.errors import CircuitError

__all__ = ["Sha256Stamper", "sha256_stamped"]


class Sha256Stamper:
    """Compressions of ``cs`` traced once per input shape and stamped (see the module docstring)."""

    def __init__(self, cs):
        self.cs = cs
        self._cache = TemplateCache()

    @property
    def traced(self) -> int:
        """How many compression shapes were traced (every other compression was stamped)."""
        return self._cache.traced

    def compression(self, input_bits, current_hash) -> list:
        """:func:`~cuzk.circuit.gadgets.sha256.sha256_compression_function`, stamped."""
        bits = list(input_bits)
        if len(bits) != 512 or len(current_hash) != 8:
            raise CircuitError(f"a compression takes 512 bits and 8 words, got {len(bits)} and {len(current_hash)}")
        return words_from_bare(_bits.compress_cached(self.cs, self._cache, to_bare(bits), words_to_bare(current_hash)))

    def sha256(self, bits) -> list:
        """:func:`~cuzk.circuit.gadgets.sha256`, its compressions stamped; 256 Booleans."""
        bits = list(bits)
        if len(bits) % 8:
            raise CircuitError(f"sha256 takes whole bytes, got {len(bits)} bits")
        return from_bare(_bits.sha256(self.cs, to_bare(bits), self._cache))


def sha256_stamped(cs, bits, stamper: Sha256Stamper | None = None) -> list:
    """:func:`~cuzk.circuit.gadgets.sha256` with stamped compressions; pass a shared
    :class:`Sha256Stamper` to reuse templates across hashes."""
    return (stamper or Sha256Stamper(cs)).sha256(bits)

"""Byte formats at cuzk's edges: bellperson ``.params``/``.vk`` (:mod:`cuzk.formats.bellperson`) and proof bytes (:mod:`cuzk.formats.bellperson_proof`).

    >>> from cuzk.formats import bellperson
    >>> bellperson.PARAMS_QUERIES[0][0]
    'h'
"""

from cuzk.formats import bellperson, bellperson_proof

__all__ = ["bellperson", "bellperson_proof"]

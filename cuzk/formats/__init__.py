"""Byte formats at cuzk's edges: bellperson ``.params``/``.vk`` (:mod:`cuzk.formats.bellperson`).

    >>> from cuzk.formats import bellperson
    >>> bellperson.PARAMS_QUERIES[0][0]
    'h'
"""

from cuzk.formats import bellperson

__all__ = ["bellperson"]

"""Ready-made circuits: :func:`porep_like`, the storage-proof-shaped demo family.

    >>> from cuzk.circuits import porep_like
"""

from cuzk.circuits.porep import PorepLike, porep_like

__all__ = ["porep_like", "PorepLike"]

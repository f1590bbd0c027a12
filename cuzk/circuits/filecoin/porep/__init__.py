"""Filecoin's stacked-DRG proof of replication (PoRep): graph, sealing, vanilla proofs and the
StackedCircuit with rust-fil-proofs' constraint counts (docs/filecoin.md)."""

__all__: list = []

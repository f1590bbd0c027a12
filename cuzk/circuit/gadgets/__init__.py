"""cuzk.circuit.gadgets"""

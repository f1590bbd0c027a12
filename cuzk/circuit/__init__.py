"""cuzk.circuit"""

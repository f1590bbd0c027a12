"""cuzk.circuits"""

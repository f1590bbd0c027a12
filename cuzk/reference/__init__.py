"""cuzk.reference"""

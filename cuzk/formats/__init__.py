"""cuzk.formats"""

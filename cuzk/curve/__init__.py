"""cuzk.curve"""

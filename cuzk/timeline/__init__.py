"""cuzk.timeline"""

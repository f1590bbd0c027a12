"""cuzk.synth"""

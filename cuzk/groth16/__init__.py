"""cuzk.groth16"""

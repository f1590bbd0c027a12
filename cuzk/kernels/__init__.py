"""cuzk.kernels"""

"""cuzk.pipeline"""

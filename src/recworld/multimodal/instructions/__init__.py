"""Instruction texts sent with each image, one plain-text file per image kind (see describe.py)."""

"""Seeded generators of scientific data that several tools share (each tool's own generators
live in ``envs/<tool>/data.py``): every value they produce is known, so it can be gold."""

#!/usr/bin/python3
"""Inputs and the independent numpy reference for kernel1 (b = a - 1.0), written as .npy.

kernel1.bir.json is real Neuron compiler output (reference bir-samples/kernel1.bir.json: NKI
`tensor_scalar(a, subtract, 1.0)` on a 10x10 float32 tile, published in graebm/KLR). Run from this folder: python3 make_data.py
"""
import numpy as np

rng = np.random.default_rng(20261130)
a = rng.uniform(-4.0, 4.0, size=(10, 10)).astype(np.float32)
np.save("inputs/a.npy", a)
np.save("expected/b.npy", (a - np.float32(1.0)).astype(np.float32))

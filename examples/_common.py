"""Shared helpers for the examples: platform from argv, seeded inputs, result check."""

from __future__ import annotations

import sys

import numpy as np


def platform_from_argv(default: str = "a2a3sim") -> str:
    """``python examples/x.py a5sim`` runs on a5sim; the default is a2a3sim."""
    return sys.argv[1] if len(sys.argv) > 1 else default


def rand(*shape: int, dtype=np.float32, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def check(name: str, got: np.ndarray, want: np.ndarray, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """Assert closeness and print one line with the max abs error."""
    err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
    print(f"{name}: OK (max abs error {err:.3g})")

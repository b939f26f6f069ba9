"""Shared helpers of the Python tests: the fresh random seed (SPARSETC_TEST_SEED pins it, as in
the C++ tests), random sparse matrices with empty rows, and float64 references."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "capi", "python"))

SEED = int(os.environ.get("SPARSETC_TEST_SEED", np.random.SeedSequence().entropy % 2**32))
print(f"sparsetc python tests: SPARSETC_TEST_SEED={SEED}", file=sys.stderr)


def rng(offset=0):
    return np.random.default_rng(SEED + offset)


def random_csr(generator, rows, cols, density, dtype=np.float64, empty_rows=2):
    """A random SciPy CSR matrix with some empty rows (odd sizes are the caller's choice)."""
    import scipy.sparse as sp
    m = sp.random(rows, cols, density=density, format="lil", random_state=generator, dtype=np.float64)
    for r in generator.choice(rows, size=min(empty_rows, rows), replace=False):
        m.rows[r], m.data[r] = [], []
    m = m.tocsr()
    m.data = (generator.uniform(0.5, 1.5, m.nnz) * generator.choice([-1, 1], m.nnz)).astype(dtype)
    return m


def scipy_has_float16():
    """SciPy 1.15+ no longer stores float16 in sparse matrices."""
    import scipy.sparse as sp
    try:
        sp.csr_matrix(np.ones((1, 1), dtype=np.float16))
        return True
    except (ValueError, TypeError):
        return False


def tolerance(dtype):
    return {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5, np.dtype(np.float16): 1e-2}[np.dtype(dtype)]


def relative_error(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    scale = max(np.abs(want).max(initial=0.0), 1.0)
    return np.abs(got - want).max(initial=0.0) / scale

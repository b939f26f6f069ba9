"""The Python package as installed by cmake --install: it must load the installed library (not
the build tree's, not one named by SPARSETC_LIBRARY) and multiply.
    python3 installed_python.py <install prefix>     (with PYTHONPATH=<prefix>/share/sparsetc/python)
"""
import os
import sys

import numpy as np
import scipy.sparse as sp

prefix = os.path.realpath(sys.argv[1])
import sparsetc  # noqa: E402

package = os.path.realpath(os.path.dirname(sparsetc.__file__))
library = os.path.realpath(sparsetc.library_path())
assert package.startswith(prefix + os.sep), f"imported {package}, not the installed package"
assert library.startswith(prefix + os.sep), f"loaded {library}, not the installed library"

A = sp.csr_matrix(np.array([[1.0, 0, 2], [0, 0, 0], [3, 4, 0]]))
B = np.array([[1.0, 0], [1, 1], [1, 2]])
C = sparsetc.spmm(A, B)
assert np.array_equal(C, A @ B), C
S = sparsetc.spgemm(A, A)
assert np.array_equal(S.toarray(), (A @ A).toarray()), S.toarray()
print(f"installed package {package} with {library}: ok")

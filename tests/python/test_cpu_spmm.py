"""SpMM from Python on the CPU backend: SciPy sparse matrices times NumPy arrays, checked against
a float64 dense reference on fresh random inputs (odd sizes, empty rows), with outputs poisoned
with NaN first so every element must be written."""
import unittest

import numpy as np
import scipy.sparse as sp

import support

import sparsetc


class SpmmHost(unittest.TestCase):
    def setUp(self):
        self.g = support.rng(1)
        self.A = support.random_csr(self.g, 37, 29, 0.15)
        self.reference = self.A.toarray()

    def check(self, got, want, dtype=np.float64):
        self.assertLess(support.relative_error(got, want), support.tolerance(dtype))

    def test_row_and_column_major_keep_their_order(self):
        for order in ("C", "F"):
            B = np.asarray(self.g.standard_normal((29, 11)), order=order)
            C = sparsetc.spmm(self.A, B)
            self.assertIsInstance(C, np.ndarray)
            self.assertEqual(C.shape, (37, 11))
            self.assertTrue(C.flags.c_contiguous if order == "C" else C.flags.f_contiguous)
            self.check(C, self.reference @ B)

    def test_strided_views_are_used_in_place(self):
        big = self.g.standard_normal((29, 20))
        B = big[:, 3:14]                              # row-major with ld 20
        Bt = np.asfortranarray(self.g.standard_normal((40, 11)))[5:34, :]  # column-major with ld 40
        for b in (B, Bt, big[::-1, :11]):             # the last one has a negative stride: copied
            self.check(sparsetc.spmm(self.A, b), self.reference @ b)

    def test_alpha_beta_and_out(self):
        B = self.g.standard_normal((29, 6))
        C0 = self.g.standard_normal((37, 6))
        C = np.asfortranarray(C0.copy())
        result = sparsetc.spmm(self.A, B, alpha=-1.5, beta=0.25, out=C)
        self.assertIs(result, C)
        self.check(C, -1.5 * self.reference @ B + 0.25 * C0)
        poisoned = np.full((37, 6), np.nan)
        sparsetc.spmm(self.A, B, out=poisoned)         # beta 0: C is never read
        self.assertFalse(np.isnan(poisoned).any())
        self.check(poisoned, self.reference @ B)

    def test_transposed_and_vector(self):
        B = self.g.standard_normal((37, 5))
        self.check(sparsetc.spmm(self.A, B, op_a="t"), self.reference.T @ B)
        v = self.g.standard_normal(29)
        y = sparsetc.spmm(self.A, v)
        self.assertEqual(y.shape, (37,))
        self.check(y, self.reference @ v)

    def test_formats_index_types_and_flavours(self):
        B = self.g.standard_normal((29, 4))
        want = self.reference @ B
        csr64 = self.A.copy()
        csr64.indptr, csr64.indices = csr64.indptr.astype(np.int64), csr64.indices.astype(np.int64)
        variants = [self.A.tocsc(), self.A.tocoo(), csr64, self.A.tolil(), self.A.todok()]
        if hasattr(sp, "csr_array"):
            variants.append(sp.csr_array(self.A))
        for A in variants:
            self.check(sparsetc.spmm(A, B), want)

    def test_precisions(self):
        B = self.g.standard_normal((29, 8))
        dtypes = (np.float32, np.float16) if support.scipy_has_float16() else (np.float32,)
        for dtype in dtypes:
            A = self.A.astype(dtype)
            b = B.astype(dtype)
            C = sparsetc.spmm(A, b)
            self.assertEqual(C.dtype, dtype)
            self.check(C, A.astype(np.float64).toarray() @ b.astype(np.float64), dtype)
        C = sparsetc.spmm(self.A.astype(np.float32), B)  # mixed: the wider type
        self.assertEqual(C.dtype, np.float64)
        C = sparsetc.spmm(self.A, B.astype(np.float16))  # half B (any SciPy): float64 result
        self.assertEqual(C.dtype, np.float64)
        self.check(C, self.reference @ B.astype(np.float16).astype(np.float64))
        ints = sp.csr_matrix(np.array([[1, 0], [2, 3]]))     # integer values are taken as float64
        self.check(sparsetc.spmm(ints, np.eye(2)), [[1, 0], [2, 3]])

    def test_unsorted_and_repeated_entries_are_canonicalised(self):
        indptr = np.array([0, 3, 3, 5])
        indices = np.array([2, 0, 2, 1, 0])           # row 0: unsorted and column 2 twice
        data = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
        A = sp.csr_matrix((data, indices, indptr), shape=(3, 3))
        self.assertFalse(A.has_canonical_format)
        B = self.g.standard_normal((3, 2))
        self.check(sparsetc.spmm(A, B), A.toarray() @ B)
        self.assertFalse(A.has_canonical_format)       # the caller's matrix is left as it was
        coo = sp.coo_matrix(([1.0, 2.0, 3.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))  # repeats are summed
        self.check(sparsetc.spmm(coo, np.eye(2)), [[0, 3], [3, 0]])

    def test_empty_shapes(self):
        empty = sp.csr_matrix((5, 4))
        C = sparsetc.spmm(empty, np.ones((4, 3)))
        self.check(C, np.zeros((5, 3)))
        self.assertEqual(sparsetc.spmm(self.A, np.ones((29, 0))).shape, (37, 0))

    def test_plan_reuse(self):
        B = self.g.standard_normal((29, 7))
        with sparsetc.SpmmPlan(self.A, B) as plan:
            alg, reason = plan.alg
            self.assertEqual(alg, sparsetc.SpmmAlg.CPU)
            self.assertIn("CPU", reason)
            self.assertEqual(plan.workspace_size, 0)
            self.check(plan(B), self.reference @ B)
            B2 = np.asfortranarray(self.g.standard_normal((29, 7)))   # other strides: copied to the plan's
            out = np.full((37, 7), np.nan)
            self.assertIs(plan(B2, out=out), out)
            self.check(out, self.reference @ B2)
            new_values = self.g.standard_normal(self.A.nnz)
            plan.set_values(new_values)
            A2 = self.A.copy()
            A2.data = new_values
            C = np.ones((37, 7))
            plan(B, out=C, alpha=2.0, beta=-1.0)
            self.check(C, 2.0 * A2.toarray() @ B - 1.0)
            with self.assertRaises(ValueError):
                plan(self.g.standard_normal((29, 8)))                 # another shape than planned
            with self.assertRaises(ValueError):
                plan(B, beta=1.0)                                     # beta without out

    def test_matrix_object_is_shared_by_calls(self):
        M = sparsetc.Matrix(self.A)
        info = M.info()
        self.assertEqual((info["rows"], info["cols"], info["nnz"]), (37, 29, self.A.nnz))
        self.assertEqual(info["ownership"], sparsetc.Ownership.BORROW)
        B = self.g.standard_normal((29, 3))
        for _ in range(2):
            self.check(sparsetc.spmm(M, B), self.reference @ B)
        M.close()
        with self.assertRaises(ValueError):
            M.info()

    def test_explicit_handle_and_threads(self):
        with sparsetc.Handle("cpu", num_threads=3, validation="values") as h:
            self.assertEqual(h.backend, sparsetc.Backend.CPU)
            self.assertEqual(h.validation, sparsetc.Validation.VALUES)
            B = self.g.standard_normal((29, 5))
            M = sparsetc.Matrix(self.A, handle=h)
            self.check(sparsetc.spmm(M, B), self.reference @ B)
            M.close()


if __name__ == "__main__":
    unittest.main()

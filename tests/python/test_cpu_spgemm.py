"""SpGEMM from Python on the CPU backend: SciPy operands in every format, against SciPy's own
product in float64 on fresh random inputs; plans with reuse after new values."""
import unittest

import numpy as np
import scipy.sparse as sp

import support

import sparsetc


class SpgemmHost(unittest.TestCase):
    def setUp(self):
        self.g = support.rng(2)
        self.A = support.random_csr(self.g, 41, 33, 0.12)
        self.B = support.random_csr(self.g, 33, 27, 0.15)

    def check(self, C, want, dtype=np.float64):
        self.assertTrue(sp.issparse(C))
        self.assertEqual(C.format, "csr")
        self.assertEqual(C.shape, want.shape)
        self.assertTrue(C.has_sorted_indices)
        self.assertLess(support.relative_error(C.toarray(), want.toarray()), support.tolerance(dtype))

    def test_product_of_two_matrices(self):
        C = sparsetc.spgemm(self.A, self.B)
        self.assertIsInstance(C, sp.csr_matrix)
        self.check(C, self.A @ self.B)
        # the structure is exactly SciPy's, before any cancellation
        want = (abs(self.A) @ abs(self.B)).tocsr()
        want.sort_indices()
        np.testing.assert_array_equal(C.indptr, want.indptr)
        np.testing.assert_array_equal(C.indices, want.indices)

    def test_square_default_and_transposes(self):
        S = support.random_csr(self.g, 30, 30, 0.1)
        self.check(sparsetc.spgemm(S), S @ S)
        self.check(sparsetc.spgemm(self.A, self.A, op_a="t"), self.A.T @ self.A)
        self.check(sparsetc.spgemm(self.A, self.A, op_b="t"), self.A @ self.A.T)

    def test_formats_and_flavours(self):
        want = self.A @ self.B
        for a, b in ((self.A.tocsc(), self.B.tocoo()), (self.A.tocoo(), self.B.tocsc()), (self.A.tolil(), self.B)):
            self.check(sparsetc.spgemm(a, b), want)
        if hasattr(sp, "csr_array"):
            C = sparsetc.spgemm(sp.csr_array(self.A), sp.csr_array(self.B))
            self.assertIsInstance(C, sp.csr_array)
            self.check(C, want)

    def test_single_precision(self):
        a, b = self.A.astype(np.float32), self.B.astype(np.float32)
        C = sparsetc.spgemm(a, b)
        self.assertEqual(C.dtype, np.float32)
        self.check(C, a.astype(np.float64) @ b.astype(np.float64), np.float32)

    def test_drop_tolerance(self):
        C = sparsetc.spgemm(self.A, self.B, drop_tolerance=0.5)
        want = (self.A @ self.B).tocsr()
        want.data[np.abs(want.data) <= 0.5] = 0
        want.eliminate_zeros()
        self.assertTrue((np.abs(C.data) > 0.5).all())
        self.check(C, want)

    def test_plan_reuse_after_new_values(self):
        with sparsetc.SpgemmPlan(self.A, self.B) as plan:
            alg, reason = plan.alg
            self.assertEqual(alg, sparsetc.SpgemmAlg.CPU)
            products, memory = plan.estimate
            want = (self.A @ self.B).tocsr()
            self.assertEqual(products, int(np.diff(self.B.indptr)[self.A.indices].sum()))
            self.assertGreater(memory, 0)
            self.assertGreaterEqual(plan.nnz, want.nnz)
            self.check(plan(), want)
            A2 = self.A.copy()
            A2.data = self.g.standard_normal(self.A.nnz)
            plan.set_values(A=A2)                          # a matrix of the same pattern
            self.check(plan(), A2 @ self.B)
            B_values = self.g.standard_normal(self.B.nnz)
            plan.set_values(B=B_values)                    # or the values array itself
            B2 = self.B.copy()
            B2.data = B_values
            C = plan.compute(as_matrix=True)               # the plan's own Matrix, no copy
            self.assertIsInstance(C, sparsetc.Matrix)
            self.check(C.export(), A2 @ B2)
            with self.assertRaises(ValueError):
                plan.set_values(A=np.ones(self.A.nnz + 1))

    def test_plan_of_a_square_matrix_updates_both_operands(self):
        S = support.random_csr(self.g, 25, 25, 0.15)
        plan = sparsetc.SpgemmPlan(S)
        self.check(plan(), S @ S)
        plan.set_values(A=2 * S.data)
        self.check(plan(), 4 * (S @ S))
        plan.close()


if __name__ == "__main__":
    unittest.main()

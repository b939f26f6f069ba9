"""CuPy and PyTorch operands: device arrays passed by pointer, work ordered on the framework's
current stream, results of the same kind on the same device. Checked against a float64 host
reference on fresh random inputs, outputs poisoned with NaN first. Every class skips cleanly
without its framework or without a GPU (PyTorch CPU tensors need no GPU)."""
import unittest

import numpy as np

import support

import sparsetc

try:
    import cupy
    import cupyx.scipy.sparse as cusparse
except ImportError:
    cupy = None
try:
    import torch
except ImportError:
    torch = None


def _devices():
    try:
        return sparsetc.device_count()
    except Exception:
        return 0


HAVE_GPU = _devices() > 0
NO_CUPY = "CuPy is not installed" if cupy is None else ("no CUDA device" if not HAVE_GPU else None)
NO_TORCH = "PyTorch is not installed" if torch is None else None
NO_TORCH_GPU = NO_TORCH or (None if HAVE_GPU and torch.cuda.is_available() else "no CUDA device")


def close(test, got, want, dtype):
    test.assertLess(support.relative_error(got, want), support.tolerance(dtype))


@unittest.skipIf(NO_CUPY, NO_CUPY or "")
class CupyOperands(unittest.TestCase):
    def setUp(self):
        self.g = support.rng(10)
        self.A = support.random_csr(self.g, 301, 257, 0.03)
        self.dA = cusparse.csr_matrix(self.A)

    def test_spmm_keeps_kind_order_and_device(self):
        for order in ("C", "F"):
            B = np.asarray(self.g.standard_normal((257, 33)), order=order)
            C = sparsetc.spmm(self.dA, cupy.asarray(B, order=order))
            self.assertIsInstance(C, cupy.ndarray)
            self.assertEqual(C.shape, (301, 33))
            self.assertTrue(C.flags.c_contiguous if order == "C" else C.flags.f_contiguous)
            close(self, cupy.asnumpy(C), self.A.toarray() @ B, np.float64)

    def test_spmm_single_precision_with_poisoned_output(self):
        B = self.g.standard_normal((257, 16)).astype(np.float32)
        a = self.A.astype(np.float32)
        out = cupy.full((301, 16), cupy.nan, dtype=np.float32)
        sparsetc.spmm(cusparse.csr_matrix(a), cupy.asarray(B), out=out)
        host = cupy.asnumpy(out)
        self.assertFalse(np.isnan(host).any())
        close(self, host, a.astype(np.float64).toarray() @ B.astype(np.float64), np.float32)

    def test_work_follows_the_current_stream(self):
        B = cupy.asarray(self.g.standard_normal((257, 8)))
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            C = sparsetc.spmm(self.dA, B, alpha=3.0)
            self.assertEqual(sparsetc.default_handle(True, 0).stream, stream.ptr)
            D = C * 2  # ordered after the multiply on the same stream
        stream.synchronize()
        close(self, cupy.asnumpy(D), 6.0 * self.A.toarray() @ cupy.asnumpy(B), np.float64)

    def test_spmm_plan_reuse(self):
        B = cupy.asarray(self.g.standard_normal((257, 12)))
        plan = sparsetc.SpmmPlan(self.dA, B)
        close(self, cupy.asnumpy(plan(B)), self.A.toarray() @ cupy.asnumpy(B), np.float64)
        values = self.g.standard_normal(self.A.nnz)
        plan.set_values(cupy.asarray(values))
        A2 = self.A.copy()
        A2.data = values
        out = cupy.ones((301, 12))
        plan(B, out=out, alpha=0.5, beta=2.0)
        close(self, cupy.asnumpy(out), 0.5 * A2.toarray() @ cupy.asnumpy(B) + 2.0, np.float64)
        plan.close()

    def test_spgemm_returns_cupyx_csr(self):
        Bs = support.random_csr(self.g, 257, 190, 0.03)
        for dtype in (np.float64, np.float32):
            a, b = self.A.astype(dtype), Bs.astype(dtype)
            C = sparsetc.spgemm(cusparse.csr_matrix(a), cusparse.csr_matrix(b))
            self.assertIsInstance(C, cusparse.csr_matrix)
            self.assertEqual(C.dtype, dtype)
            close(self, C.get().toarray(), (a.astype(np.float64) @ b.astype(np.float64)).toarray(), dtype)

    def test_spgemm_plan_reuse_with_new_values(self):
        S = support.random_csr(self.g, 200, 200, 0.02)
        plan = sparsetc.SpgemmPlan(cusparse.csr_matrix(S))
        self.assertEqual(plan.nnz, (abs(S) @ abs(S)).nnz)
        close(self, plan().get().toarray(), (S @ S).toarray(), np.float64)
        values = self.g.standard_normal(S.nnz)
        plan.set_values(A=cupy.asarray(values))
        S2 = S.copy()
        S2.data = values
        close(self, plan().get().toarray(), (S2 @ S2).toarray(), np.float64)
        plan.close()

    def test_host_and_device_operands_do_not_mix(self):
        with self.assertRaises(ValueError):
            sparsetc.spmm(self.A, cupy.ones((257, 2)))


@unittest.skipIf(NO_TORCH_GPU, NO_TORCH_GPU or "")
class TorchCudaOperands(unittest.TestCase):
    def setUp(self):
        self.g = support.rng(20)
        self.A = support.random_csr(self.g, 333, 270, 0.02)
        self.device = torch.device("cuda", 0)
        self.tA = torch.sparse_csr_tensor(torch.from_numpy(self.A.indptr.astype(np.int64)),
                                          torch.from_numpy(self.A.indices.astype(np.int64)),
                                          torch.from_numpy(self.A.data), self.A.shape).to(self.device)

    def test_spmm_returns_a_tensor_on_the_same_device(self):
        B = self.g.standard_normal((270, 24))
        tB = torch.from_numpy(B).to(self.device).requires_grad_(True)
        C = sparsetc.spmm(self.tA, tB)
        self.assertIsInstance(C, torch.Tensor)
        self.assertEqual(C.device, self.device)
        self.assertEqual(tuple(C.shape), (333, 24))
        close(self, C.cpu().numpy(), self.A.toarray() @ B, np.float64)

    def test_column_major_and_single_precision(self):
        B = self.g.standard_normal((270, 10)).astype(np.float32)
        tB = torch.from_numpy(B).to(self.device).t().contiguous().t()   # column-major
        tA = self.tA.to(torch.float32)
        out = torch.full((10, 333), float("nan"), device=self.device).t()  # column-major output
        sparsetc.spmm(tA, tB, out=out)
        self.assertFalse(torch.isnan(out).any().item())
        close(self, out.cpu().numpy(), self.A.toarray() @ B.astype(np.float64), np.float32)

    def test_half_precisions(self):
        B = self.g.standard_normal((270, 16))
        for dtype, reference_dtype, tol in ((torch.float16, np.float16, 1e-2), (torch.bfloat16, None, 3e-2)):
            tA, tB = self.tA.to(dtype), torch.from_numpy(B).to(self.device).to(dtype)
            out = torch.full((333, 16), float("nan"), device=self.device, dtype=dtype)
            sparsetc.spmm(tA, tB, out=out)
            got = out.float().cpu().numpy()
            self.assertFalse(np.isnan(got).any())
            a = tA.to_dense().double().cpu().numpy()           # the rounded inputs, in float64
            b = tB.double().cpu().numpy()
            self.assertLess(support.relative_error(got, a @ b), tol, str(dtype))
            C = sparsetc.spmm(tA, tB)                           # a new tensor of the same type
            self.assertEqual(C.dtype, dtype)

    def test_coo_input_and_transpose(self):
        coo = self.tA.to_sparse_coo()
        B = self.g.standard_normal((333, 5))
        C = sparsetc.spmm(coo, torch.from_numpy(B).to(self.device), op_a="t")
        close(self, C.cpu().numpy(), self.A.toarray().T @ B, np.float64)

    def test_work_follows_the_current_stream(self):
        B = torch.from_numpy(self.g.standard_normal((270, 4))).to(self.device)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            C = sparsetc.spmm(self.tA, B)
            self.assertEqual(sparsetc.default_handle(True, 0).stream, stream.cuda_stream)
            D = C + 1
        stream.synchronize()
        close(self, D.cpu().numpy(), self.A.toarray() @ B.cpu().numpy() + 1, np.float64)

    def test_spgemm_returns_a_sparse_csr_tensor(self):
        Bs = support.random_csr(self.g, 270, 150, 0.03)
        tB = torch.sparse_csr_tensor(torch.from_numpy(Bs.indptr.astype(np.int64)),
                                     torch.from_numpy(Bs.indices.astype(np.int64)),
                                     torch.from_numpy(Bs.data), Bs.shape).to(self.device)
        C = sparsetc.spgemm(self.tA, tB)
        self.assertEqual(C.layout, torch.sparse_csr)
        self.assertEqual(C.device, self.device)
        close(self, C.to_dense().cpu().numpy(), (self.A @ Bs).toarray(), np.float64)
        plan = sparsetc.SpgemmPlan(self.tA, tB)
        plan()
        values = self.g.standard_normal(Bs.nnz)
        plan.set_values(B=torch.from_numpy(values).to(self.device))
        Bs2 = Bs.copy()
        Bs2.data = values
        close(self, plan().to_dense().cpu().numpy(), (self.A @ Bs2).toarray(), np.float64)
        plan.close()

    def test_half_precision_spgemm_computes_in_single(self):
        tA = self.tA.to(torch.float16)
        C = sparsetc.spgemm(tA, tA.t().to_sparse_csr())
        self.assertEqual(C.values().dtype, torch.float32)
        a = tA.to_dense().double().cpu().numpy()  # the half inputs exactly as PyTorch rounded them
        close(self, C.to_dense().cpu().numpy(), a @ a.T, np.float32)


@unittest.skipIf(NO_TORCH, NO_TORCH or "")
class TorchHostOperands(unittest.TestCase):
    """PyTorch CPU tensors run on the CPU backend and come back as CPU tensors."""

    def test_spmm_and_spgemm_on_the_host(self):
        g = support.rng(30)
        A = support.random_csr(g, 40, 31, 0.1)
        tA = torch.sparse_csr_tensor(torch.from_numpy(A.indptr), torch.from_numpy(A.indices),
                                     torch.from_numpy(A.data), A.shape)
        B = g.standard_normal((31, 6))
        C = sparsetc.spmm(tA, torch.from_numpy(B))
        self.assertEqual(C.device.type, "cpu")
        close(self, C.numpy(), A.toarray() @ B, np.float64)
        S = sparsetc.spgemm(tA, tA.t().to_sparse_csr())
        self.assertEqual(S.layout, torch.sparse_csr)
        close(self, S.to_dense().numpy(), (A @ A.T).toarray(), np.float64)


if __name__ == "__main__":
    unittest.main()

"""Failures become exceptions carrying the library's message; library information, Matrix
Market files, generators, analysis and conversions through the Python package."""
import os
import tempfile
import unittest

import numpy as np
import scipy.sparse as sp

import support

import sparsetc


class Errors(unittest.TestCase):
    def test_status_codes_map_to_exception_classes(self):
        for status, cls in sparsetc.EXCEPTION_OF_STATUS.items():
            self.assertTrue(issubclass(cls, sparsetc.SparsetcError))
            self.assertEqual(sparsetc.status_name(status), "SPARSETC_STATUS_" + sparsetc.Status(status).name)
        self.assertTrue(issubclass(sparsetc.InvalidIndexError, ValueError))
        self.assertTrue(issubclass(sparsetc.AllocFailedError, MemoryError))
        self.assertTrue(issubclass(sparsetc.FileIOError, OSError))
        self.assertEqual(sparsetc.status_name(12345), "SPARSETC_STATUS_UNKNOWN")

    def test_bad_structure_names_the_entry(self):
        A = sp.csr_matrix((np.ones(3), np.array([0, 3, 1]), np.array([0, 2, 2, 3])), shape=(3, 3))  # column 3
        with self.assertRaises(sparsetc.InvalidIndexError) as caught:
            sparsetc.spmm(A, np.ones((3, 2)))
        error = caught.exception
        self.assertEqual(error.status, sparsetc.Status.INVALID_INDEX)
        self.assertEqual(error.name, "SPARSETC_STATUS_INVALID_INDEX")
        self.assertIn("column index 3 out of range", error.message)
        self.assertIn("row 0", error.message)
        self.assertIn(error.message, str(error))

    def test_shapes_that_do_not_fit(self):
        A = sp.random(6, 5, density=0.5, format="csr", random_state=1)
        with self.assertRaises(sparsetc.DimensionMismatchError) as caught:
            sparsetc.spmm(A, np.ones((4, 2)))
        self.assertIn("B is 4x2", caught.exception.message)
        with self.assertRaises(sparsetc.DimensionMismatchError):
            sparsetc.spgemm(A, A)

    def test_values_checked_at_the_values_level(self):
        A = sp.csr_matrix(np.array([[1.0, np.nan], [0.0, 2.0]]))
        handle = sparsetc.Handle("cpu", validation="values")
        with self.assertRaises(sparsetc.NanOrInfError) as caught:
            sparsetc.Matrix(A, handle=handle)
        self.assertIn("NaN", caught.exception.message)
        sparsetc.Matrix(A).close()                     # the default level does not look at values
        handle.close()

    def test_unsupported_algorithm_and_wrong_arguments(self):
        A = sp.identity(4, format="csr")
        with self.assertRaises(sparsetc.NotSupportedError) as caught:
            sparsetc.spmm(A, np.ones((4, 1)), alg="cusparse")
        self.assertIn("device", caught.exception.message)
        with self.assertRaises(ValueError):
            sparsetc.spmm(A, np.ones((4, 1)), alg="fastest")       # not an algorithm name
        with self.assertRaises(TypeError):
            sparsetc.spmm(A, [[1.0]] * 4)                          # not an array
        with self.assertRaises(TypeError):
            sparsetc.spmm(A, np.ones((4, 1), dtype=np.complex128))

    def test_output_that_cannot_be_described(self):
        A = sp.identity(4, format="csr")
        out = np.zeros((8, 8))[::2, ::2]                           # no unit stride in either direction
        with self.assertRaises(ValueError):
            sparsetc.spmm(A, np.ones((4, 4)), out=out)

    def test_missing_file(self):
        with self.assertRaises(sparsetc.FileIOError) as caught:
            sparsetc.read_mtx("/nonexistent/matrix.mtx")
        self.assertIn("/nonexistent/matrix.mtx", caught.exception.message)
        self.assertIsInstance(caught.exception, OSError)


class LibraryAndFiles(unittest.TestCase):
    def test_library_information(self):
        major, minor, patch = sparsetc.version()
        self.assertEqual(sparsetc.abi_version(), sparsetc.ABI_VERSION)
        self.assertTrue(sparsetc.build_info().startswith(f"sparsetc {major}.{minor}.{patch}"))
        self.assertGreaterEqual(sparsetc.device_count(), 0)
        self.assertTrue(os.path.basename(sparsetc.library_path()).startswith("libsparsetc.so"))

    def test_matrix_market_round_trip(self):
        g = support.rng(3)
        A = support.random_csr(g, 23, 17, 0.2)
        with tempfile.TemporaryDirectory() as directory:
            for name in ("a.mtx", "a.mtx.gz"):
                path = os.path.join(directory, name)
                sparsetc.write_mtx(path, A)
                back = sparsetc.read_mtx(path)
                self.assertIsInstance(back, sp.csr_matrix)
                self.assertEqual(back.shape, A.shape)
                np.testing.assert_array_equal(back.toarray(), A.toarray())   # 17 digits: exact
            single = sparsetc.read_mtx(os.path.join(directory, "a.mtx"), dtype="f32", index_type="i64",
                                       as_matrix=True)
            info = single.info()
            self.assertEqual((info["value_type"], info["offset_type"], info["index_type"]),
                             (sparsetc.ValueType.F32, sparsetc.IndexType.I64, sparsetc.IndexType.I64))
            self.assertEqual(single.export().dtype, np.float32)  # (SciPy narrows small int64 indices itself)
            single.close()

    def test_generator_and_analysis(self):
        P = sparsetc.generate("poisson2d5:8", seed=7)
        self.assertEqual(P.shape, (64, 64))
        self.assertEqual(P.nnz, 5 * 64 - 4 * 8)
        stats = sparsetc.analyze(P)
        self.assertEqual(stats["rows"], 64)
        self.assertEqual(stats["row_length_max"], 5)
        self.assertEqual(stats["bandwidth"], 8)
        self.assertEqual(stats["products"], int((np.diff(P.indptr) ** 2).sum()))
        self.assertEqual(sparsetc.generate("poisson2d5:8", seed=7).data.tolist(), P.data.tolist())

    def test_conversion_and_one_based_export(self):
        g = support.rng(4)
        A = support.random_csr(g, 12, 9, 0.3)
        M = sparsetc.Matrix(A)
        for fmt in ("csc", "coo"):
            converted = M.convert(fmt, base="one", offset_type="i32", value_type="f32")
            info = converted.info()
            self.assertEqual(info["base"], sparsetc.IndexBase.ONE)
            self.assertEqual(info["format"].name.lower(), fmt)
            back = converted.export()                        # shifted back to zero-based
            self.assertEqual(back.format, fmt)
            np.testing.assert_allclose(back.toarray(), A.toarray(), rtol=1e-6)
            converted.close()
        M.close()

    def test_log_callback(self):
        lines = []
        sparsetc.set_log_callback(lambda level, message: lines.append((level, message)))
        sparsetc.set_log_level("info")
        try:
            sparsetc.spmm(sp.identity(3, format="csr"), np.ones((3, 1)))
        finally:
            sparsetc.set_log_level("off")
            sparsetc.set_log_callback(None)
        self.assertTrue(any("spmm" in message for _, message in lines), lines)


if __name__ == "__main__":
    unittest.main()

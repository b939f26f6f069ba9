"""Runs the Python package's tests with unittest (no pytest needed; `python3 -m pytest
tests/python` runs the same files) and prints one closing line "N passed, N failed, N skipped".

    python3 run_tests.py cpu   # test_cpu_*.py and test_constants.py: NumPy/SciPy, CPU backend
    python3 run_tests.py gpu   # test_gpu_*.py: CuPy and PyTorch on a GPU

Exit status: 0 when every test passed (or was skipped while others passed), 1 on a failure,
77 when nothing ran because everything was skipped (CTest's SKIP_RETURN_CODE: no GPU, no CuPy
and no PyTorch).
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PATTERNS = {"cpu": ["test_constants.py", "test_cpu_*.py"], "gpu": ["test_gpu_*.py"]}


class _Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passed = 0

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1


def main(group):
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    for pattern in PATTERNS[group]:
        suite.addTests(loader.discover(HERE, pattern=pattern, top_level_dir=HERE))
    runner = unittest.TextTestRunner(verbosity=2, resultclass=_Result, stream=sys.stdout)
    result = runner.run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"{result.passed} passed, {failed} failed, {len(result.skipped)} skipped")
    if failed:
        return 1
    return 0 if result.passed else 77


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "cpu"))

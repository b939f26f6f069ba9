"""The bindings agree with the C header: every enumerator of sparsetc_types.h has the same value
in the Python package and in the Fortran module, and the ctypes structures have the C fields in
the C order with the C types."""
import os
import re
import unittest

import support  # noqa: F401 - puts the package on sys.path

import sparsetc
from sparsetc import _library, _structs

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HEADER = open(os.path.join(ROOT, "include", "sparsetc", "sparsetc_types.h")).read()
API = re.sub(r"/\*.*?\*/", "", open(os.path.join(ROOT, "include", "sparsetc", "sparsetc.h")).read(), flags=re.S)
FORTRAN = open(os.path.join(ROOT, "capi", "fortran", "sparsetc.f90")).read()

# C enumeration -> (Python class, enumerator prefix)
ENUMS = {
    "sparsetc_status_e": (sparsetc.Status, "SPARSETC_STATUS_"),
    "sparsetc_value_type_e": (sparsetc.ValueType, "SPARSETC_VALUE_"),
    "sparsetc_index_type_e": (sparsetc.IndexType, "SPARSETC_INDEX_"),
    "sparsetc_index_base_e": (sparsetc.IndexBase, "SPARSETC_BASE_"),
    "sparsetc_order_e": (sparsetc.Order, "SPARSETC_ORDER_"),
    "sparsetc_operation_e": (sparsetc.Operation, "SPARSETC_OP_"),
    "sparsetc_format_e": (sparsetc.Format, "SPARSETC_FORMAT_"),
    "sparsetc_memory_e": (sparsetc.Memory, "SPARSETC_MEMORY_"),
    "sparsetc_ownership_e": (sparsetc.Ownership, "SPARSETC_"),
    "sparsetc_backend_e": (sparsetc.Backend, "SPARSETC_BACKEND_"),
    "sparsetc_validation_e": (sparsetc.Validation, "SPARSETC_VALIDATE_"),
    "sparsetc_duplicates_e": (sparsetc.Duplicates, "SPARSETC_DUPLICATES_"),
    "sparsetc_compute_type_e": (sparsetc.ComputeType, "SPARSETC_COMPUTE_"),
    "sparsetc_spmm_alg_e": (sparsetc.SpmmAlg, "SPARSETC_SPMM_ALG_"),
    "sparsetc_spgemm_alg_e": (sparsetc.SpgemmAlg, "SPARSETC_SPGEMM_ALG_"),
    "sparsetc_tc_precision_e": (sparsetc.TcPrecision, "SPARSETC_TC_PRECISION_"),
    "sparsetc_reorder_method_e": (sparsetc.ReorderMethod, "SPARSETC_REORDER_"),
}

# C structure -> ctypes mirror
STRUCTS = {
    "sparsetc_matrix_info_t": _structs.MatrixInfo,
    "sparsetc_analysis_t": _structs.Analysis,
    "sparsetc_spgemm_options_t": _structs.SpgemmOptions,
    "sparsetc_allocator_t": _structs.Allocator,
    "sparsetc_memory_stats_t": _structs.MemoryStats,
    "sparsetc_reorder_options_t": _structs.ReorderOptions,
    "sparsetc_reorder_quality_t": _structs.ReorderQuality,
}


def python_name(member, prefix):
    """SPARSETC_INDEX_32 -> I32, SPARSETC_COMPUTE_32F -> F32, SPARSETC_VALUE_F16 -> F16."""
    name = member[len(prefix):]
    if name[0].isdigit():
        name = ("I" + name) if prefix == "SPARSETC_INDEX_" else ("F" + name[:-1])
    return name


def header_enums():
    enums = {}
    for name, body in re.findall(r"enum (\w+) \{(.*?)\};", HEADER, flags=re.S):
        members = re.findall(r"(SPARSETC_\w+)\s*=\s*(\w+)", re.sub(r"/\*.*?\*/", "", body, flags=re.S))
        enums[name] = [(m, int(v, 0)) for m, v in members if not m.endswith("MAX_")]
    return enums


class Constants(unittest.TestCase):
    def test_every_enumeration_is_mirrored(self):
        self.assertEqual(set(header_enums()), set(ENUMS))

    def test_python_enumerations_match_the_header(self):
        for enum_name, members in header_enums().items():
            cls, prefix = ENUMS[enum_name]
            want = {python_name(m, prefix): v for m, v in members}
            got = {m.name: int(m) for m in cls}
            self.assertEqual(got, want, enum_name)

    def test_fortran_parameters_match_the_header(self):
        parameters = {name.upper(): int(value) for name, value in re.findall(
            r"integer\(c_int32_t\), parameter :: (SPARSETC_\w+) = (-?\d+)", FORTRAN)}
        for enum_name, members in header_enums().items():
            for member, value in members:
                self.assertIn(member, parameters, f"{member} is missing from the Fortran module")
                self.assertEqual(parameters[member], value, member)

    def test_structures_match_the_header(self):
        ctypes_of = {"size_t": "c_ulong", "int64_t": "c_long", "int32_t": "c_int", "double": "c_double",
                     "void*": "c_void_p"}
        for struct_name, cls in STRUCTS.items():
            body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (struct_name, struct_name), HEADER, flags=re.S)
            self.assertIsNotNone(body, struct_name)
            text = re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S)
            fields = []
            for declaration in text.split(";"):
                declaration = " ".join(declaration.split())
                if not declaration:
                    continue
                pointer = re.match(r".*\(\*(\w+)\)\(", declaration)
                if pointer:  # function pointer
                    fields.append((pointer.group(1), "function"))
                    continue
                ctype, name = re.match(r"(.*?)\s*(\**\w+)$", declaration).groups()
                if name.startswith("*"):
                    ctype, name = ctype + "*", name.lstrip("*")
                fields.append((name, ctype))
            self.assertEqual([n for n, _ in fields], [n for n, _ in cls._fields_], struct_name)
            for (name, ctype), (_, mirror) in zip(fields, cls._fields_):
                if ctype == "function":
                    self.assertTrue(hasattr(mirror, "argtypes"), f"{struct_name}.{name}")
                else:  # the enumeration typedefs are int32_t
                    want = "c_int" if re.fullmatch(r"sparsetc_\w+_t", ctype) else ctypes_of[ctype]
                    self.assertEqual(mirror.__name__, want, f"{struct_name}.{name}")

    def test_every_function_is_bound_with_its_arity(self):
        functions = re.findall(r"SPARSETC_API\s+[^;(]*?\b(sparsetc_\w+)\s*\(([^)]*)\)", API)
        self.assertGreater(len(functions), 50)
        fortran = {name: args for args, name in re.findall(
            r"function \w+\(\s*&?\s*([\w,\s&]*?)\)\s*bind\(C, name=\"(\w+)\"\)", FORTRAN)}
        for name, args in functions:
            arity = len([a for a in args.split(",") if a.strip() and a.strip() != "void"])
            prototypes = {**_library._PROTOTYPES, **_library._STRING_GETTERS}
            self.assertIn(name, prototypes, f"{name} has no Python prototype")
            self.assertEqual(len(prototypes[name]), arity, f"{name}: Python argument count")
            self.assertIn(name, fortran, f"{name} has no Fortran interface")
            fortran_args = [a for a in re.split(r"[,&\s]+", fortran[name]) if a]
            self.assertEqual(len(fortran_args), arity, f"{name}: Fortran argument count")


if __name__ == "__main__":
    unittest.main()

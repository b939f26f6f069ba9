! sparsetc: Fortran bindings of the C ABI (include/sparsetc/sparsetc.h), Fortran 2008 with
! iso_c_binding. Shipped as source because .mod files are compiler-specific: compile this file
! with your compiler and link libsparsetc (docs/fortran.md).
!
! What is here:
!  - every enumeration of sparsetc_types.h as an integer(c_int32_t) parameter of the same name;
!  - the option and report structures as bind(C) derived types of the same names;
!  - an interface for every C function, under the C name. Handles, matrices, descriptors and plans
!    are type(c_ptr); arrays go in as c_loc(array) (the actual argument needs TARGET). Functions
!    taking or returning C strings have Fortran wrappers under the C name that take and return
!    Fortran strings (the raw binding is the name with the suffix _c);
!  - conveniences for Fortran's own conventions, one-based indices and column-major arrays:
!      sparsetc_create_csr / sparsetc_create_coo   (1-based by default, arrays copied)
!      sparsetc_dense_from_array                  (a column-major 2-D array, borrowed)
!      sparsetc_set_values                        (new values of a matrix, same pattern)
!      sparsetc_matrix_get_csr                    (a matrix as allocatable 1-based CSR arrays)
!      sparsetc_last_error, sparsetc_status_name, sparsetc_build_info, sparsetc_check
!
! Every function returns the status (SPARSETC_STATUS_SUCCESS = 0), as in C.
module sparsetc
  use, intrinsic :: iso_c_binding
  implicit none

  ! The ABI (SONAME number, libsparsetc.so.<abi>) these bindings were written for: compare with
  ! sparsetc_get_abi_version at run time.
  integer(c_int32_t), parameter :: SPARSETC_FORTRAN_ABI_VERSION = 1

  ! sparsetc_status_t
  integer(c_int32_t), parameter :: SPARSETC_STATUS_SUCCESS = 0
  integer(c_int32_t), parameter :: SPARSETC_STATUS_NOT_INITIALIZED = 1
  integer(c_int32_t), parameter :: SPARSETC_STATUS_ALLOC_FAILED = 2
  integer(c_int32_t), parameter :: SPARSETC_STATUS_INVALID_VALUE = 3
  integer(c_int32_t), parameter :: SPARSETC_STATUS_ARCH_MISMATCH = 4
  integer(c_int32_t), parameter :: SPARSETC_STATUS_MAPPING_ERROR = 5
  integer(c_int32_t), parameter :: SPARSETC_STATUS_EXECUTION_FAILED = 6
  integer(c_int32_t), parameter :: SPARSETC_STATUS_INTERNAL_ERROR = 7
  integer(c_int32_t), parameter :: SPARSETC_STATUS_MATRIX_TYPE_NOT_SUPPORTED = 8
  integer(c_int32_t), parameter :: SPARSETC_STATUS_ZERO_PIVOT = 9
  integer(c_int32_t), parameter :: SPARSETC_STATUS_NOT_SUPPORTED = 10
  integer(c_int32_t), parameter :: SPARSETC_STATUS_INSUFFICIENT_RESOURCES = 11
  integer(c_int32_t), parameter :: SPARSETC_STATUS_NULL_POINTER = 100
  integer(c_int32_t), parameter :: SPARSETC_STATUS_DIMENSION_MISMATCH = 101
  integer(c_int32_t), parameter :: SPARSETC_STATUS_INVALID_INDEX = 102
  integer(c_int32_t), parameter :: SPARSETC_STATUS_UNSORTED_INDICES = 103
  integer(c_int32_t), parameter :: SPARSETC_STATUS_DUPLICATE_ENTRY = 104
  integer(c_int32_t), parameter :: SPARSETC_STATUS_INVALID_ROW_OFFSETS = 105
  integer(c_int32_t), parameter :: SPARSETC_STATUS_NAN_OR_INF = 106
  integer(c_int32_t), parameter :: SPARSETC_STATUS_VALUE_OUT_OF_RANGE = 107
  integer(c_int32_t), parameter :: SPARSETC_STATUS_TYPE_MISMATCH = 108
  integer(c_int32_t), parameter :: SPARSETC_STATUS_INVALID_STATE = 109
  integer(c_int32_t), parameter :: SPARSETC_STATUS_WORKSPACE_TOO_SMALL = 110
  integer(c_int32_t), parameter :: SPARSETC_STATUS_CUDA_ERROR = 111
  integer(c_int32_t), parameter :: SPARSETC_STATUS_CUSPARSE_ERROR = 112
  integer(c_int32_t), parameter :: SPARSETC_STATUS_CUBLAS_ERROR = 113
  integer(c_int32_t), parameter :: SPARSETC_STATUS_IO_ERROR = 114
  integer(c_int32_t), parameter :: SPARSETC_STATUS_FILE_FORMAT_ERROR = 115
  integer(c_int32_t), parameter :: SPARSETC_STATUS_NO_DEVICE = 116
  integer(c_int32_t), parameter :: SPARSETC_STATUS_SIZE_OVERFLOW = 117
  integer(c_int32_t), parameter :: SPARSETC_STATUS_UNKNOWN_EXCEPTION = 118
  ! sparsetc_value_type_t
  integer(c_int32_t), parameter :: SPARSETC_VALUE_F32 = 0
  integer(c_int32_t), parameter :: SPARSETC_VALUE_F64 = 1
  integer(c_int32_t), parameter :: SPARSETC_VALUE_F16 = 2
  integer(c_int32_t), parameter :: SPARSETC_VALUE_BF16 = 14
  ! sparsetc_index_type_t
  integer(c_int32_t), parameter :: SPARSETC_INDEX_32 = 2
  integer(c_int32_t), parameter :: SPARSETC_INDEX_64 = 3
  ! sparsetc_index_base_t
  integer(c_int32_t), parameter :: SPARSETC_BASE_ZERO = 0
  integer(c_int32_t), parameter :: SPARSETC_BASE_ONE = 1
  ! sparsetc_order_t
  integer(c_int32_t), parameter :: SPARSETC_ORDER_COL = 1
  integer(c_int32_t), parameter :: SPARSETC_ORDER_ROW = 2
  ! sparsetc_operation_t
  integer(c_int32_t), parameter :: SPARSETC_OP_NON_TRANSPOSE = 0
  integer(c_int32_t), parameter :: SPARSETC_OP_TRANSPOSE = 1
  ! sparsetc_format_t
  integer(c_int32_t), parameter :: SPARSETC_FORMAT_CSR = 1
  integer(c_int32_t), parameter :: SPARSETC_FORMAT_CSC = 2
  integer(c_int32_t), parameter :: SPARSETC_FORMAT_COO = 3
  ! sparsetc_memory_t
  integer(c_int32_t), parameter :: SPARSETC_MEMORY_HOST = 0
  integer(c_int32_t), parameter :: SPARSETC_MEMORY_DEVICE = 1
  ! sparsetc_ownership_t
  integer(c_int32_t), parameter :: SPARSETC_COPY = 0
  integer(c_int32_t), parameter :: SPARSETC_BORROW = 1
  ! sparsetc_backend_t
  integer(c_int32_t), parameter :: SPARSETC_BACKEND_AUTO = 0
  integer(c_int32_t), parameter :: SPARSETC_BACKEND_CPU = 1
  integer(c_int32_t), parameter :: SPARSETC_BACKEND_GPU = 2
  ! sparsetc_validation_t
  integer(c_int32_t), parameter :: SPARSETC_VALIDATE_NONE = 0
  integer(c_int32_t), parameter :: SPARSETC_VALIDATE_ARGUMENTS = 1
  integer(c_int32_t), parameter :: SPARSETC_VALIDATE_STRUCTURE = 2
  integer(c_int32_t), parameter :: SPARSETC_VALIDATE_VALUES = 3
  ! sparsetc_duplicates_t
  integer(c_int32_t), parameter :: SPARSETC_DUPLICATES_ERROR = 0
  integer(c_int32_t), parameter :: SPARSETC_DUPLICATES_SUM = 1
  ! sparsetc_compute_type_t
  integer(c_int32_t), parameter :: SPARSETC_COMPUTE_DEFAULT = 0
  integer(c_int32_t), parameter :: SPARSETC_COMPUTE_32F = 1
  integer(c_int32_t), parameter :: SPARSETC_COMPUTE_64F = 2
  integer(c_int32_t), parameter :: SPARSETC_COMPUTE_TF32 = 3
  ! sparsetc_spmm_alg_t
  integer(c_int32_t), parameter :: SPARSETC_SPMM_ALG_AUTO = 0
  integer(c_int32_t), parameter :: SPARSETC_SPMM_ALG_CPU = 1
  integer(c_int32_t), parameter :: SPARSETC_SPMM_ALG_CUSPARSE = 2
  integer(c_int32_t), parameter :: SPARSETC_SPMM_ALG_BCSR_TC = 3
  integer(c_int32_t), parameter :: SPARSETC_SPMM_ALG_CSR = 4
  integer(c_int32_t), parameter :: SPARSETC_SPMM_ALG_DCSR = 5
  integer(c_int32_t), parameter :: SPARSETC_SPMM_ALG_TILED_DCSR = 6
  integer(c_int32_t), parameter :: SPARSETC_SPMM_ALG_VBR_CUBLAS = 7
  ! sparsetc_spgemm_alg_t
  integer(c_int32_t), parameter :: SPARSETC_SPGEMM_ALG_AUTO = 0
  integer(c_int32_t), parameter :: SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH = 1
  integer(c_int32_t), parameter :: SPARSETC_SPGEMM_ALG_TSPARSE_TC = 2
  integer(c_int32_t), parameter :: SPARSETC_SPGEMM_ALG_CUSPARSE = 3
  integer(c_int32_t), parameter :: SPARSETC_SPGEMM_ALG_CPU = 4
  ! sparsetc_tc_precision_t
  integer(c_int32_t), parameter :: SPARSETC_TC_PRECISION_DEFAULT = 0
  integer(c_int32_t), parameter :: SPARSETC_TC_PRECISION_F16 = 1
  integer(c_int32_t), parameter :: SPARSETC_TC_PRECISION_BF16 = 2
  integer(c_int32_t), parameter :: SPARSETC_TC_PRECISION_F64 = 3
  integer(c_int32_t), parameter :: SPARSETC_TC_PRECISION_CUDA_CORES = 4
  integer(c_int32_t), parameter :: SPARSETC_TC_PRECISION_F16_SPLIT = 5
  integer(c_int32_t), parameter :: SPARSETC_TC_PRECISION_BF16_SPLIT = 6
  ! sparsetc_reorder_method_t
  integer(c_int32_t), parameter :: SPARSETC_REORDER_IDENTITY = 0
  integer(c_int32_t), parameter :: SPARSETC_REORDER_ONE_SA = 1
  integer(c_int32_t), parameter :: SPARSETC_REORDER_SA = 2
  integer(c_int32_t), parameter :: SPARSETC_REORDER_AUTO = 3

  ! ---- structures (the caller sets struct_size = c_sizeof(x) before passing x)
  type, bind(C) :: sparsetc_matrix_info_t
    integer(c_size_t) :: struct_size = 0
    integer(c_int64_t) :: rows = 0, cols = 0, nnz = 0
    integer(c_int32_t) :: format = 0, offset_type = 0, index_type = 0, base = 0, value_type = 0
    integer(c_int32_t) :: memory = 0, ownership = 0
  end type

  type, bind(C) :: sparsetc_analysis_t
    integer(c_size_t) :: struct_size = 0
    integer(c_int64_t) :: rows = 0, cols = 0, nnz = 0, empty_rows = 0, row_length_min = 0, row_length_max = 0
    real(c_double) :: row_length_mean = 0, row_length_std = 0, density = 0
    integer(c_int64_t) :: products = 0, bandwidth = 0
    integer(c_int64_t) :: blocks_16x8 = 0, blocks_16x16 = 0, blocks_8x8 = 0
    real(c_double) :: fill_16x8 = 0, fill_16x16 = 0, fill_8x8 = 0
    real(c_double) :: tile_density_median = 0, tile_density_mean = 0, tile_density_std = 0
    integer(c_int64_t) :: strip_width = 0      ! in: 0 for the default width; out: the width used
    integer(c_int64_t) :: nonempty_rows = 0
    real(c_double) :: nonempty_rows_per_strip_mean = 0, h_norm = 0, ssf = 0
  end type

  type, bind(C) :: sparsetc_spgemm_options_t
    integer(c_size_t) :: struct_size = 0
    real(c_double) :: drop_tolerance = -1      ! < 0 keeps every entry
    integer(c_size_t) :: memory_budget = 0     ! bytes of temporary memory of the binned algorithm; 0: default
    integer(c_int32_t) :: tc_precision = 0     ! SPARSETC_TC_PRECISION_*: arithmetic of the tSparse algorithm
  end type

  type, bind(C) :: sparsetc_allocator_t
    integer(c_size_t) :: struct_size = 0
    type(c_ptr) :: user_data = c_null_ptr
    type(c_funptr) :: allocate = c_null_funptr
    type(c_funptr) :: deallocate = c_null_funptr
  end type

  type, bind(C) :: sparsetc_memory_stats_t
    integer(c_size_t) :: struct_size = 0
    integer(c_int64_t) :: current_bytes = 0, peak_bytes = 0, allocations = 0, live_allocations = 0
    integer(c_int64_t) :: pool_reserved_bytes = 0
  end type

  type, bind(C) :: sparsetc_reorder_options_t
    integer(c_size_t) :: struct_size = 0
    real(c_double) :: tau = 0
    integer(c_int64_t) :: block_width = 0, block_height = 0, max_group_height = 0
    integer(c_int32_t) :: pad_groups = 0, reserved = 0
    real(c_double) :: auto_min_reduction = 0
  end type

  type, bind(C) :: sparsetc_reorder_quality_t
    integer(c_size_t) :: struct_size = 0
    integer(c_int64_t) :: block_height = 0, block_width = 0, blocks = 0
    real(c_double) :: in_block_density = 0
    integer(c_int64_t) :: block_rows = 0
    real(c_double) :: blocks_per_block_row_mean = 0, blocks_per_block_row_std = 0
    integer(c_int64_t) :: blocks_per_block_row_max = 0, groups = 0
    real(c_double) :: mean_group_height = 0
    integer(c_int64_t) :: vbr_blocks = 0
    real(c_double) :: vbr_in_block_density = 0, vbr_mean_block_height = 0
  end type

  ! ---- the C functions
  interface
    integer(c_int32_t) function sparsetc_get_version(major, minor, patch) bind(C, name="sparsetc_get_version")
      import
      integer(c_int32_t), intent(out) :: major
      integer(c_int32_t), intent(out) :: minor
      integer(c_int32_t), intent(out) :: patch
    end function

    integer(c_int32_t) function sparsetc_get_abi_version(abi) bind(C, name="sparsetc_get_abi_version")
      import
      integer(c_int32_t), intent(out) :: abi
    end function

    integer(c_int32_t) function sparsetc_get_build_info_c( &
        buffer, buffer_size) bind(C, name="sparsetc_get_build_info")
      import
      character(kind=c_char), intent(out) :: buffer(*)
      integer(c_size_t), value :: buffer_size
    end function

    type(c_ptr) function sparsetc_get_status_name_c(status) bind(C, name="sparsetc_get_status_name")
      import
      integer(c_int32_t), value :: status
    end function

    type(c_ptr) function sparsetc_get_status_string_c(status) bind(C, name="sparsetc_get_status_string")
      import
      integer(c_int32_t), value :: status
    end function

    integer(c_int32_t) function sparsetc_get_device_count(count) bind(C, name="sparsetc_get_device_count")
      import
      integer(c_int32_t), intent(out) :: count
    end function

    integer(c_int32_t) function sparsetc_create(handle) bind(C, name="sparsetc_create")
      import
      type(c_ptr), intent(out) :: handle
    end function

    integer(c_int32_t) function sparsetc_create_with_backend( &
        handle, backend, device) bind(C, name="sparsetc_create_with_backend")
      import
      type(c_ptr), intent(out) :: handle
      integer(c_int32_t), value :: backend
      integer(c_int32_t), value :: device
    end function

    integer(c_int32_t) function sparsetc_destroy(handle) bind(C, name="sparsetc_destroy")
      import
      type(c_ptr), value :: handle
    end function

    integer(c_int32_t) function sparsetc_get_backend(handle, backend) bind(C, name="sparsetc_get_backend")
      import
      type(c_ptr), value :: handle
      integer(c_int32_t), intent(out) :: backend
    end function

    integer(c_int32_t) function sparsetc_set_stream(handle, stream) bind(C, name="sparsetc_set_stream")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: stream
    end function

    integer(c_int32_t) function sparsetc_get_stream(handle, stream) bind(C, name="sparsetc_get_stream")
      import
      type(c_ptr), value :: handle
      type(c_ptr), intent(out) :: stream
    end function

    integer(c_int32_t) function sparsetc_set_validation(handle, level) bind(C, name="sparsetc_set_validation")
      import
      type(c_ptr), value :: handle
      integer(c_int32_t), value :: level
    end function

    integer(c_int32_t) function sparsetc_get_validation(handle, level) bind(C, name="sparsetc_get_validation")
      import
      type(c_ptr), value :: handle
      integer(c_int32_t), intent(out) :: level
    end function

    integer(c_int32_t) function sparsetc_set_duplicates( &
        handle, policy) bind(C, name="sparsetc_set_duplicates")
      import
      type(c_ptr), value :: handle
      integer(c_int32_t), value :: policy
    end function

    integer(c_int32_t) function sparsetc_set_num_threads( &
        handle, threads) bind(C, name="sparsetc_set_num_threads")
      import
      type(c_ptr), value :: handle
      integer(c_int32_t), value :: threads
    end function

    integer(c_int32_t) function sparsetc_set_allocator( &
        handle, allocator) bind(C, name="sparsetc_set_allocator")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: allocator
    end function

    integer(c_int32_t) function sparsetc_get_memory_stats( &
        handle, stats) bind(C, name="sparsetc_get_memory_stats")
      import
      type(c_ptr), value :: handle
      type(sparsetc_memory_stats_t), intent(inout) :: stats
    end function

    integer(c_int32_t) function sparsetc_reset_peak_memory(handle) bind(C, name="sparsetc_reset_peak_memory")
      import
      type(c_ptr), value :: handle
    end function

    integer(c_int32_t) function sparsetc_get_last_error_c( &
        handle, buffer, buffer_size) bind(C, name="sparsetc_get_last_error")
      import
      type(c_ptr), value :: handle
      character(kind=c_char), intent(out) :: buffer(*)
      integer(c_size_t), value :: buffer_size
    end function

    integer(c_int32_t) function sparsetc_set_log_level(level) bind(C, name="sparsetc_set_log_level")
      import
      integer(c_int32_t), value :: level
    end function

    integer(c_int32_t) function sparsetc_set_log_callback( &
        callback, user_data) bind(C, name="sparsetc_set_log_callback")
      import
      type(c_funptr), value :: callback
      type(c_ptr), value :: user_data
    end function

    integer(c_int32_t) function sparsetc_matrix_create_csr( &
        handle, matrix, rows, cols, nnz, row_offsets, col_indices, values, offset_type, index_type, &
        base, value_type, memory, ownership) bind(C, name="sparsetc_matrix_create_csr")
      import
      type(c_ptr), value :: handle
      type(c_ptr), intent(out) :: matrix
      integer(c_int64_t), value :: rows
      integer(c_int64_t), value :: cols
      integer(c_int64_t), value :: nnz
      type(c_ptr), value :: row_offsets
      type(c_ptr), value :: col_indices
      type(c_ptr), value :: values
      integer(c_int32_t), value :: offset_type
      integer(c_int32_t), value :: index_type
      integer(c_int32_t), value :: base
      integer(c_int32_t), value :: value_type
      integer(c_int32_t), value :: memory
      integer(c_int32_t), value :: ownership
    end function

    integer(c_int32_t) function sparsetc_matrix_create_csc( &
        handle, matrix, rows, cols, nnz, col_offsets, row_indices, values, offset_type, index_type, &
        base, value_type, memory, ownership) bind(C, name="sparsetc_matrix_create_csc")
      import
      type(c_ptr), value :: handle
      type(c_ptr), intent(out) :: matrix
      integer(c_int64_t), value :: rows
      integer(c_int64_t), value :: cols
      integer(c_int64_t), value :: nnz
      type(c_ptr), value :: col_offsets
      type(c_ptr), value :: row_indices
      type(c_ptr), value :: values
      integer(c_int32_t), value :: offset_type
      integer(c_int32_t), value :: index_type
      integer(c_int32_t), value :: base
      integer(c_int32_t), value :: value_type
      integer(c_int32_t), value :: memory
      integer(c_int32_t), value :: ownership
    end function

    integer(c_int32_t) function sparsetc_matrix_create_coo( &
        handle, matrix, rows, cols, nnz, row_indices, col_indices, values, index_type, base, &
        value_type, memory, ownership) bind(C, name="sparsetc_matrix_create_coo")
      import
      type(c_ptr), value :: handle
      type(c_ptr), intent(out) :: matrix
      integer(c_int64_t), value :: rows
      integer(c_int64_t), value :: cols
      integer(c_int64_t), value :: nnz
      type(c_ptr), value :: row_indices
      type(c_ptr), value :: col_indices
      type(c_ptr), value :: values
      integer(c_int32_t), value :: index_type
      integer(c_int32_t), value :: base
      integer(c_int32_t), value :: value_type
      integer(c_int32_t), value :: memory
      integer(c_int32_t), value :: ownership
    end function

    integer(c_int32_t) function sparsetc_matrix_read_mtx_c( &
        handle, path, value_type, index_type, matrix) bind(C, name="sparsetc_matrix_read_mtx")
      import
      type(c_ptr), value :: handle
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int32_t), value :: value_type
      integer(c_int32_t), value :: index_type
      type(c_ptr), intent(out) :: matrix
    end function

    integer(c_int32_t) function sparsetc_matrix_write_mtx_c( &
        handle, matrix, path) bind(C, name="sparsetc_matrix_write_mtx")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: matrix
      character(kind=c_char), intent(in) :: path(*)
    end function

    integer(c_int32_t) function sparsetc_matrix_generate_c( &
        handle, spec, seed, value_type, matrix) bind(C, name="sparsetc_matrix_generate")
      import
      type(c_ptr), value :: handle
      character(kind=c_char), intent(in) :: spec(*)
      integer(c_int64_t), value :: seed
      integer(c_int32_t), value :: value_type
      type(c_ptr), intent(out) :: matrix
    end function

    integer(c_int32_t) function sparsetc_matrix_copy_to( &
        handle, source, memory, copy) bind(C, name="sparsetc_matrix_copy_to")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: source
      integer(c_int32_t), value :: memory
      type(c_ptr), intent(out) :: copy
    end function

    integer(c_int32_t) function sparsetc_matrix_convert( &
        handle, source, format, offset_type, index_type, base, value_type, result) bind(C, name="sparsetc_matrix_convert")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: source
      integer(c_int32_t), value :: format
      integer(c_int32_t), value :: offset_type
      integer(c_int32_t), value :: index_type
      integer(c_int32_t), value :: base
      integer(c_int32_t), value :: value_type
      type(c_ptr), intent(out) :: result
    end function

    integer(c_int32_t) function sparsetc_matrix_get_info( &
        matrix, info) bind(C, name="sparsetc_matrix_get_info")
      import
      type(c_ptr), value :: matrix
      type(sparsetc_matrix_info_t), intent(inout) :: info
    end function

    integer(c_int32_t) function sparsetc_matrix_get_arrays( &
        matrix, offsets_or_rows, indices, values) bind(C, name="sparsetc_matrix_get_arrays")
      import
      type(c_ptr), value :: matrix
      type(c_ptr), intent(out) :: offsets_or_rows
      type(c_ptr), intent(out) :: indices
      type(c_ptr), intent(out) :: values
    end function

    integer(c_int32_t) function sparsetc_matrix_set_values( &
        handle, matrix, values) bind(C, name="sparsetc_matrix_set_values")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: matrix
      type(c_ptr), value :: values
    end function

    integer(c_int32_t) function sparsetc_matrix_check( &
        handle, matrix, level) bind(C, name="sparsetc_matrix_check")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: matrix
      integer(c_int32_t), value :: level
    end function

    integer(c_int32_t) function sparsetc_matrix_destroy(matrix) bind(C, name="sparsetc_matrix_destroy")
      import
      type(c_ptr), value :: matrix
    end function

    integer(c_int32_t) function sparsetc_dense_create( &
        handle, dense, rows, cols, ld, values, value_type, order, memory) bind(C, name="sparsetc_dense_create")
      import
      type(c_ptr), value :: handle
      type(c_ptr), intent(out) :: dense
      integer(c_int64_t), value :: rows
      integer(c_int64_t), value :: cols
      integer(c_int64_t), value :: ld
      type(c_ptr), value :: values
      integer(c_int32_t), value :: value_type
      integer(c_int32_t), value :: order
      integer(c_int32_t), value :: memory
    end function

    integer(c_int32_t) function sparsetc_dense_set_values( &
        dense, values) bind(C, name="sparsetc_dense_set_values")
      import
      type(c_ptr), value :: dense
      type(c_ptr), value :: values
    end function

    integer(c_int32_t) function sparsetc_dense_get( &
        dense, rows, cols, ld, values, value_type, order, memory) bind(C, name="sparsetc_dense_get")
      import
      type(c_ptr), value :: dense
      integer(c_int64_t), intent(out) :: rows
      integer(c_int64_t), intent(out) :: cols
      integer(c_int64_t), intent(out) :: ld
      type(c_ptr), intent(out) :: values
      integer(c_int32_t), intent(out) :: value_type
      integer(c_int32_t), intent(out) :: order
      integer(c_int32_t), intent(out) :: memory
    end function

    integer(c_int32_t) function sparsetc_dense_destroy(dense) bind(C, name="sparsetc_dense_destroy")
      import
      type(c_ptr), value :: dense
    end function

    integer(c_int32_t) function sparsetc_analyze(handle, A, B, analysis) bind(C, name="sparsetc_analyze")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      type(sparsetc_analysis_t), intent(inout) :: analysis
    end function

    integer(c_int32_t) function sparsetc_spmm_plan_create( &
        handle, plan, op_a, A, B, C, compute_type, alg) bind(C, name="sparsetc_spmm_plan_create")
      import
      type(c_ptr), value :: handle
      type(c_ptr), intent(out) :: plan
      integer(c_int32_t), value :: op_a
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      type(c_ptr), value :: C
      integer(c_int32_t), value :: compute_type
      integer(c_int32_t), value :: alg
    end function

    integer(c_int32_t) function sparsetc_spmm_workspace_size( &
        plan, bytes) bind(C, name="sparsetc_spmm_workspace_size")
      import
      type(c_ptr), value :: plan
      integer(c_size_t), intent(out) :: bytes
    end function

    integer(c_int32_t) function sparsetc_spmm_execute( &
        plan, alpha, B, beta, C, workspace, workspace_bytes) bind(C, name="sparsetc_spmm_execute")
      import
      type(c_ptr), value :: plan
      real(c_double), value :: alpha
      type(c_ptr), value :: B
      real(c_double), value :: beta
      type(c_ptr), value :: C
      type(c_ptr), value :: workspace
      integer(c_size_t), value :: workspace_bytes
    end function

    integer(c_int32_t) function sparsetc_spmm_plan_get_alg_c( &
        plan, alg, reason, reason_size) bind(C, name="sparsetc_spmm_plan_get_alg")
      import
      type(c_ptr), value :: plan
      integer(c_int32_t), intent(out) :: alg
      character(kind=c_char), intent(out) :: reason(*)
      integer(c_size_t), value :: reason_size
    end function

    integer(c_int32_t) function sparsetc_spmm_plan_destroy(plan) bind(C, name="sparsetc_spmm_plan_destroy")
      import
      type(c_ptr), value :: plan
    end function

    integer(c_int32_t) function sparsetc_spmm( &
        handle, op_a, alpha, A, B, beta, C, compute_type, alg) bind(C, name="sparsetc_spmm")
      import
      type(c_ptr), value :: handle
      integer(c_int32_t), value :: op_a
      real(c_double), value :: alpha
      type(c_ptr), value :: A
      type(c_ptr), value :: B
      real(c_double), value :: beta
      type(c_ptr), value :: C
      integer(c_int32_t), value :: compute_type
      integer(c_int32_t), value :: alg
    end function

    integer(c_int32_t) function sparsetc_spgemm_plan_create( &
        handle, plan, op_a, A, op_b, B, compute_type, alg, options) bind(C, name="sparsetc_spgemm_plan_create")
      import
      type(c_ptr), value :: handle
      type(c_ptr), intent(out) :: plan
      integer(c_int32_t), value :: op_a
      type(c_ptr), value :: A
      integer(c_int32_t), value :: op_b
      type(c_ptr), value :: B
      integer(c_int32_t), value :: compute_type
      integer(c_int32_t), value :: alg
      type(c_ptr), value :: options
    end function

    integer(c_int32_t) function sparsetc_spgemm_symbolic(plan, nnz_c) bind(C, name="sparsetc_spgemm_symbolic")
      import
      type(c_ptr), value :: plan
      integer(c_int64_t), intent(out) :: nnz_c
    end function

    integer(c_int32_t) function sparsetc_spgemm_numeric(plan, C) bind(C, name="sparsetc_spgemm_numeric")
      import
      type(c_ptr), value :: plan
      type(c_ptr), intent(inout) :: C
    end function

    integer(c_int32_t) function sparsetc_spgemm_plan_get_estimate( &
        plan, products, memory_bytes) bind(C, name="sparsetc_spgemm_plan_get_estimate")
      import
      type(c_ptr), value :: plan
      integer(c_int64_t), intent(out) :: products
      integer(c_size_t), intent(out) :: memory_bytes
    end function

    integer(c_int32_t) function sparsetc_spgemm_plan_get_alg_c( &
        plan, alg, reason, reason_size) bind(C, name="sparsetc_spgemm_plan_get_alg")
      import
      type(c_ptr), value :: plan
      integer(c_int32_t), intent(out) :: alg
      character(kind=c_char), intent(out) :: reason(*)
      integer(c_size_t), value :: reason_size
    end function

    integer(c_int32_t) function sparsetc_spgemm_plan_destroy( &
        plan) bind(C, name="sparsetc_spgemm_plan_destroy")
      import
      type(c_ptr), value :: plan
    end function

    integer(c_int32_t) function sparsetc_spgemm( &
        handle, op_a, A, op_b, B, compute_type, alg, C) bind(C, name="sparsetc_spgemm")
      import
      type(c_ptr), value :: handle
      integer(c_int32_t), value :: op_a
      type(c_ptr), value :: A
      integer(c_int32_t), value :: op_b
      type(c_ptr), value :: B
      integer(c_int32_t), value :: compute_type
      integer(c_int32_t), value :: alg
      type(c_ptr), intent(out) :: C
    end function

    integer(c_int32_t) function sparsetc_matrix_reorder( &
        handle, A, method, options, reordered) bind(C, name="sparsetc_matrix_reorder")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: A
      integer(c_int32_t), value :: method
      type(c_ptr), value :: options
      type(c_ptr), intent(out) :: reordered
    end function

    integer(c_int32_t) function sparsetc_matrix_get_permutation( &
        matrix, permutation, groups, group_ptr) bind(C, name="sparsetc_matrix_get_permutation")
      import
      type(c_ptr), value :: matrix
      type(c_ptr), value :: permutation
      type(c_ptr), value :: groups
      type(c_ptr), value :: group_ptr
    end function

    integer(c_int32_t) function sparsetc_matrix_permute_rows( &
        handle, A, permutation, result) bind(C, name="sparsetc_matrix_permute_rows")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: A
      integer(c_int64_t), intent(in) :: permutation(*)
      type(c_ptr), intent(out) :: result
    end function

    integer(c_int32_t) function sparsetc_matrix_get_reorder_quality( &
        handle, matrix, block_height, block_width, quality) bind(C, name="sparsetc_matrix_get_reorder_quality")
      import
      type(c_ptr), value :: handle
      type(c_ptr), value :: matrix
      integer(c_int64_t), value :: block_height
      integer(c_int64_t), value :: block_width
      type(sparsetc_reorder_quality_t), intent(inout) :: quality
    end function

  end interface

  ! ---- conveniences for one-based indices and column-major arrays (see the top of this file)
  interface sparsetc_create_csr
    module procedure create_csr_i32_r64, create_csr_i32_r32, create_csr_i64_r64, create_csr_i64_r32
  end interface
  interface sparsetc_create_coo
    module procedure create_coo_i32_r64, create_coo_i32_r32, create_coo_i64_r64, create_coo_i64_r32
  end interface
  interface sparsetc_dense_from_array
    module procedure dense_from_array_r64, dense_from_array_r32
  end interface
  interface sparsetc_set_values
    module procedure set_values_r64, set_values_r32
  end interface
  interface sparsetc_matrix_get_csr
    module procedure get_csr_i32_r64, get_csr_i32_r32, get_csr_i64_r64, get_csr_i64_r32
  end interface

  private :: c_string, f_string, base_or_one, export_csr
  private :: create_csr_i32_r64, create_csr_i32_r32, create_csr_i64_r64, create_csr_i64_r32
  private :: create_coo_i32_r64, create_coo_i32_r32, create_coo_i64_r64, create_coo_i64_r32
  private :: dense_from_array_r64, dense_from_array_r32, set_values_r64, set_values_r32
  private :: get_csr_i32_r64, get_csr_i32_r32, get_csr_i64_r64, get_csr_i64_r32

contains

  ! ======================================================================= strings

  ! A Fortran string (trailing blanks dropped) as a NUL-terminated C string.
  pure function c_string(text) result(s)
    character(len=*), intent(in) :: text
    character(kind=c_char, len=:), allocatable :: s
    s = trim(text) // c_null_char
  end function

  ! A NUL-terminated C string as a Fortran string ('' for NULL).
  function f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    interface
      integer(c_size_t) function c_strlen(text) bind(C, name="strlen")
        import :: c_size_t, c_ptr
        type(c_ptr), value :: text
      end function
    end interface
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n, i
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = c_strlen(p)
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  ! The message of the last failure on handle (c_null_ptr: of this thread without a handle).
  function sparsetc_last_error(handle) result(message)
    type(c_ptr), intent(in) :: handle
    character(len=:), allocatable :: message
    character(kind=c_char), target :: buffer(1024)
    integer(c_int32_t) :: status
    status = sparsetc_get_last_error_c(handle, buffer, int(size(buffer), c_size_t))
    message = f_string(c_loc(buffer))
  end function

  ! Enumerator name of a status, e.g. 'SPARSETC_STATUS_INVALID_INDEX'.
  function sparsetc_status_name(status) result(name)
    integer(c_int32_t), intent(in) :: status
    character(len=:), allocatable :: name
    name = f_string(sparsetc_get_status_name_c(status))
  end function

  ! One-line description of a status.
  function sparsetc_status_string(status) result(text)
    integer(c_int32_t), intent(in) :: status
    character(len=:), allocatable :: text
    text = f_string(sparsetc_get_status_string_c(status))
  end function

  ! Version, git revision, CUDA version and architectures of the loaded library.
  function sparsetc_build_info() result(text)
    character(len=:), allocatable :: text
    character(kind=c_char), target :: buffer(512)
    integer(c_int32_t) :: status
    status = sparsetc_get_build_info_c(buffer, int(size(buffer), c_size_t))
    text = f_string(c_loc(buffer))
  end function

  ! Stops the program with the status name and the library's message when status is a failure
  ! (handle: where the message is kept, or c_null_ptr; what: the call, for the message).
  subroutine sparsetc_check(status, handle, what)
    integer(c_int32_t), intent(in) :: status
    type(c_ptr), intent(in) :: handle
    character(len=*), intent(in), optional :: what
    if (status == SPARSETC_STATUS_SUCCESS) return
    if (present(what)) then
      write(*, '(a)') what // ': ' // sparsetc_status_name(status) // ': ' // sparsetc_last_error(handle)
    else
      write(*, '(a)') sparsetc_status_name(status) // ': ' // sparsetc_last_error(handle)
    end if
    error stop 1
  end subroutine

  ! ======================================================================= string wrappers

  integer(c_int32_t) function sparsetc_get_last_error(handle, message)
    type(c_ptr), intent(in) :: handle
    character(len=*), intent(out) :: message
    message = sparsetc_last_error(handle)
    sparsetc_get_last_error = SPARSETC_STATUS_SUCCESS
  end function

  integer(c_int32_t) function sparsetc_matrix_read_mtx(handle, path, value_type, index_type, matrix)
    type(c_ptr), intent(in) :: handle
    character(len=*), intent(in) :: path
    integer(c_int32_t), intent(in) :: value_type, index_type
    type(c_ptr), intent(out) :: matrix
    sparsetc_matrix_read_mtx = sparsetc_matrix_read_mtx_c(handle, c_string(path), value_type, index_type, matrix)
  end function

  integer(c_int32_t) function sparsetc_matrix_write_mtx(handle, matrix, path)
    type(c_ptr), intent(in) :: handle, matrix
    character(len=*), intent(in) :: path
    sparsetc_matrix_write_mtx = sparsetc_matrix_write_mtx_c(handle, matrix, c_string(path))
  end function

  integer(c_int32_t) function sparsetc_matrix_generate(handle, spec, seed, value_type, matrix)
    type(c_ptr), intent(in) :: handle
    character(len=*), intent(in) :: spec
    integer(c_int64_t), intent(in) :: seed
    integer(c_int32_t), intent(in) :: value_type
    type(c_ptr), intent(out) :: matrix
    sparsetc_matrix_generate = sparsetc_matrix_generate_c(handle, c_string(spec), seed, value_type, matrix)
  end function

  integer(c_int32_t) function sparsetc_spmm_plan_get_alg(plan, alg, reason)
    type(c_ptr), intent(in) :: plan
    integer(c_int32_t), intent(out) :: alg
    character(len=*), intent(out) :: reason
    character(kind=c_char), target :: buffer(256)
    sparsetc_spmm_plan_get_alg = sparsetc_spmm_plan_get_alg_c(plan, alg, buffer, int(size(buffer), c_size_t))
    reason = f_string(c_loc(buffer))
  end function

  integer(c_int32_t) function sparsetc_spgemm_plan_get_alg(plan, alg, reason)
    type(c_ptr), intent(in) :: plan
    integer(c_int32_t), intent(out) :: alg
    character(len=*), intent(out) :: reason
    character(kind=c_char), target :: buffer(256)
    sparsetc_spgemm_plan_get_alg = sparsetc_spgemm_plan_get_alg_c(plan, alg, buffer, int(size(buffer), c_size_t))
    reason = f_string(c_loc(buffer))
  end function

  ! ======================================================================= sparse matrices

  pure integer(c_int32_t) function base_or_one(base)
    integer(c_int32_t), intent(in), optional :: base
    base_or_one = SPARSETC_BASE_ONE
    if (present(base)) base_or_one = base
  end function

  ! sparsetc_create_csr(handle, matrix, rows, cols, row_ptr, col_ind, values [, base]):
  ! a host CSR matrix from rows+1 offsets and nnz = size(values) column indices and values,
  ! one-based unless base = SPARSETC_BASE_ZERO. The arrays are copied.
  integer(c_int32_t) function create_csr_i32_r64(handle, matrix, rows, cols, row_ptr, col_ind, values, base) &
      result(status)
    type(c_ptr), intent(in) :: handle
    type(c_ptr), intent(out) :: matrix
    integer, intent(in) :: rows, cols
    integer(c_int32_t), intent(in), target, contiguous :: row_ptr(:), col_ind(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    status = sparsetc_matrix_create_csr(handle, matrix, int(rows, c_int64_t), int(cols, c_int64_t), &
        size(values, kind=c_int64_t), c_loc(row_ptr), c_loc(col_ind), c_loc(values), SPARSETC_INDEX_32, &
        SPARSETC_INDEX_32, base_or_one(base), SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST, SPARSETC_COPY)
  end function

  integer(c_int32_t) function create_csr_i32_r32(handle, matrix, rows, cols, row_ptr, col_ind, values, base) &
      result(status)
    type(c_ptr), intent(in) :: handle
    type(c_ptr), intent(out) :: matrix
    integer, intent(in) :: rows, cols
    integer(c_int32_t), intent(in), target, contiguous :: row_ptr(:), col_ind(:)
    real(c_float), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    status = sparsetc_matrix_create_csr(handle, matrix, int(rows, c_int64_t), int(cols, c_int64_t), &
        size(values, kind=c_int64_t), c_loc(row_ptr), c_loc(col_ind), c_loc(values), SPARSETC_INDEX_32, &
        SPARSETC_INDEX_32, base_or_one(base), SPARSETC_VALUE_F32, SPARSETC_MEMORY_HOST, SPARSETC_COPY)
  end function

  integer(c_int32_t) function create_csr_i64_r64(handle, matrix, rows, cols, row_ptr, col_ind, values, base) &
      result(status)
    type(c_ptr), intent(in) :: handle
    type(c_ptr), intent(out) :: matrix
    integer, intent(in) :: rows, cols
    integer(c_int64_t), intent(in), target, contiguous :: row_ptr(:), col_ind(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    status = sparsetc_matrix_create_csr(handle, matrix, int(rows, c_int64_t), int(cols, c_int64_t), &
        size(values, kind=c_int64_t), c_loc(row_ptr), c_loc(col_ind), c_loc(values), SPARSETC_INDEX_64, &
        SPARSETC_INDEX_64, base_or_one(base), SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST, SPARSETC_COPY)
  end function

  integer(c_int32_t) function create_csr_i64_r32(handle, matrix, rows, cols, row_ptr, col_ind, values, base) &
      result(status)
    type(c_ptr), intent(in) :: handle
    type(c_ptr), intent(out) :: matrix
    integer, intent(in) :: rows, cols
    integer(c_int64_t), intent(in), target, contiguous :: row_ptr(:), col_ind(:)
    real(c_float), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    status = sparsetc_matrix_create_csr(handle, matrix, int(rows, c_int64_t), int(cols, c_int64_t), &
        size(values, kind=c_int64_t), c_loc(row_ptr), c_loc(col_ind), c_loc(values), SPARSETC_INDEX_64, &
        SPARSETC_INDEX_64, base_or_one(base), SPARSETC_VALUE_F32, SPARSETC_MEMORY_HOST, SPARSETC_COPY)
  end function

  ! sparsetc_create_coo(handle, matrix, rows, cols, row_ind, col_ind, values [, base]): a host COO
  ! matrix of nnz = size(values) triplets in any order, one-based unless base says otherwise.
  ! Repeated pairs follow sparsetc_set_duplicates. The arrays are copied.
  integer(c_int32_t) function create_coo_i32_r64(handle, matrix, rows, cols, row_ind, col_ind, values, base) &
      result(status)
    type(c_ptr), intent(in) :: handle
    type(c_ptr), intent(out) :: matrix
    integer, intent(in) :: rows, cols
    integer(c_int32_t), intent(in), target, contiguous :: row_ind(:), col_ind(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    status = sparsetc_matrix_create_coo(handle, matrix, int(rows, c_int64_t), int(cols, c_int64_t), &
        size(values, kind=c_int64_t), c_loc(row_ind), c_loc(col_ind), c_loc(values), SPARSETC_INDEX_32, &
        base_or_one(base), SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST, SPARSETC_COPY)
  end function

  integer(c_int32_t) function create_coo_i32_r32(handle, matrix, rows, cols, row_ind, col_ind, values, base) &
      result(status)
    type(c_ptr), intent(in) :: handle
    type(c_ptr), intent(out) :: matrix
    integer, intent(in) :: rows, cols
    integer(c_int32_t), intent(in), target, contiguous :: row_ind(:), col_ind(:)
    real(c_float), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    status = sparsetc_matrix_create_coo(handle, matrix, int(rows, c_int64_t), int(cols, c_int64_t), &
        size(values, kind=c_int64_t), c_loc(row_ind), c_loc(col_ind), c_loc(values), SPARSETC_INDEX_32, &
        base_or_one(base), SPARSETC_VALUE_F32, SPARSETC_MEMORY_HOST, SPARSETC_COPY)
  end function

  integer(c_int32_t) function create_coo_i64_r64(handle, matrix, rows, cols, row_ind, col_ind, values, base) &
      result(status)
    type(c_ptr), intent(in) :: handle
    type(c_ptr), intent(out) :: matrix
    integer, intent(in) :: rows, cols
    integer(c_int64_t), intent(in), target, contiguous :: row_ind(:), col_ind(:)
    real(c_double), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    status = sparsetc_matrix_create_coo(handle, matrix, int(rows, c_int64_t), int(cols, c_int64_t), &
        size(values, kind=c_int64_t), c_loc(row_ind), c_loc(col_ind), c_loc(values), SPARSETC_INDEX_64, &
        base_or_one(base), SPARSETC_VALUE_F64, SPARSETC_MEMORY_HOST, SPARSETC_COPY)
  end function

  integer(c_int32_t) function create_coo_i64_r32(handle, matrix, rows, cols, row_ind, col_ind, values, base) &
      result(status)
    type(c_ptr), intent(in) :: handle
    type(c_ptr), intent(out) :: matrix
    integer, intent(in) :: rows, cols
    integer(c_int64_t), intent(in), target, contiguous :: row_ind(:), col_ind(:)
    real(c_float), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    status = sparsetc_matrix_create_coo(handle, matrix, int(rows, c_int64_t), int(cols, c_int64_t), &
        size(values, kind=c_int64_t), c_loc(row_ind), c_loc(col_ind), c_loc(values), SPARSETC_INDEX_64, &
        base_or_one(base), SPARSETC_VALUE_F32, SPARSETC_MEMORY_HOST, SPARSETC_COPY)
  end function

  ! sparsetc_set_values(handle, matrix, values): new values (same pattern, the matrix's value
  ! type and entry order); plans made from the matrix use them at their next execution.
  integer(c_int32_t) function set_values_r64(handle, matrix, values) result(status)
    type(c_ptr), intent(in) :: handle, matrix
    real(c_double), intent(in), target, contiguous :: values(:)
    status = sparsetc_matrix_set_values(handle, matrix, c_loc(values))
  end function

  integer(c_int32_t) function set_values_r32(handle, matrix, values) result(status)
    type(c_ptr), intent(in) :: handle, matrix
    real(c_float), intent(in), target, contiguous :: values(:)
    status = sparsetc_matrix_set_values(handle, matrix, c_loc(values))
  end function

  ! ======================================================================= dense matrices

  ! sparsetc_dense_from_array(handle, dense, array): describes a column-major host array, which
  ! is borrowed, not copied: the actual argument must be a whole contiguous array with the TARGET
  ! (or POINTER) attribute that outlives the descriptor's use.
  integer(c_int32_t) function dense_from_array_r64(handle, dense, array) result(status)
    type(c_ptr), intent(in) :: handle
    type(c_ptr), intent(out) :: dense
    real(c_double), intent(inout), target, contiguous :: array(:, :)
    status = sparsetc_dense_create(handle, dense, size(array, 1, kind=c_int64_t), size(array, 2, kind=c_int64_t), &
        max(1_c_int64_t, size(array, 1, kind=c_int64_t)), c_loc(array), SPARSETC_VALUE_F64, SPARSETC_ORDER_COL, &
        SPARSETC_MEMORY_HOST)
  end function

  integer(c_int32_t) function dense_from_array_r32(handle, dense, array) result(status)
    type(c_ptr), intent(in) :: handle
    type(c_ptr), intent(out) :: dense
    real(c_float), intent(inout), target, contiguous :: array(:, :)
    status = sparsetc_dense_create(handle, dense, size(array, 1, kind=c_int64_t), size(array, 2, kind=c_int64_t), &
        max(1_c_int64_t, size(array, 1, kind=c_int64_t)), c_loc(array), SPARSETC_VALUE_F32, SPARSETC_ORDER_COL, &
        SPARSETC_MEMORY_HOST)
  end function

  ! ======================================================================= results as Fortran arrays

  ! Converts matrix to a temporary host CSR with the given index type (offsets and indices),
  ! value type and base, and returns its description and arrays. The caller destroys tmp.
  integer(c_int32_t) function export_csr(handle, matrix, index_type, value_type, base, tmp, info, offsets, &
      indices, values) result(status)
    type(c_ptr), intent(in) :: handle, matrix
    integer(c_int32_t), intent(in) :: index_type, value_type, base
    type(c_ptr), intent(out) :: tmp, offsets, indices, values
    type(sparsetc_matrix_info_t), intent(out) :: info
    type(c_ptr) :: host
    tmp = c_null_ptr
    offsets = c_null_ptr
    indices = c_null_ptr
    values = c_null_ptr
    info%struct_size = c_sizeof(info)
    status = sparsetc_matrix_get_info(matrix, info)
    if (status /= SPARSETC_STATUS_SUCCESS) return
    if (info%memory /= SPARSETC_MEMORY_HOST) then
      ! a device matrix is brought to the host first (conversions stay in their memory space)
      status = sparsetc_matrix_copy_to(handle, matrix, SPARSETC_MEMORY_HOST, host)
      if (status /= SPARSETC_STATUS_SUCCESS) return
      status = sparsetc_matrix_convert(handle, host, SPARSETC_FORMAT_CSR, index_type, index_type, base, &
          value_type, tmp)
      if (sparsetc_matrix_destroy(host) /= SPARSETC_STATUS_SUCCESS .and. status == SPARSETC_STATUS_SUCCESS) &
          status = SPARSETC_STATUS_INTERNAL_ERROR
      if (status /= SPARSETC_STATUS_SUCCESS) return
    else
      status = sparsetc_matrix_convert(handle, matrix, SPARSETC_FORMAT_CSR, index_type, index_type, base, &
          value_type, tmp)
      if (status /= SPARSETC_STATUS_SUCCESS) return
    end if
    status = sparsetc_matrix_get_info(tmp, info)
    if (status /= SPARSETC_STATUS_SUCCESS) return
    status = sparsetc_matrix_get_arrays(tmp, offsets, indices, values)
  end function

  ! sparsetc_matrix_get_csr(handle, matrix, row_ptr, col_ind, values [, base]): the matrix (any
  ! format, host or device) as CSR in allocatable arrays of the arguments' kinds, one-based unless
  ! base = SPARSETC_BASE_ZERO. Column indices are sorted within each row.
  integer(c_int32_t) function get_csr_i32_r64(handle, matrix, row_ptr, col_ind, values, base) result(status)
    type(c_ptr), intent(in) :: handle, matrix
    integer(c_int32_t), allocatable, intent(out) :: row_ptr(:), col_ind(:)
    real(c_double), allocatable, intent(out) :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    type(c_ptr) :: tmp, p_offsets, p_indices, p_values
    type(sparsetc_matrix_info_t) :: info
    integer(c_int32_t), pointer :: offsets(:), indices(:)
    real(c_double), pointer :: vals(:)
    status = export_csr(handle, matrix, SPARSETC_INDEX_32, SPARSETC_VALUE_F64, base_or_one(base), tmp, info, &
        p_offsets, p_indices, p_values)
    if (status == SPARSETC_STATUS_SUCCESS) then
      call c_f_pointer(p_offsets, offsets, [info%rows + 1])
      row_ptr = offsets
      allocate(col_ind(info%nnz), values(info%nnz))
      if (info%nnz > 0) then
        call c_f_pointer(p_indices, indices, [info%nnz])
        call c_f_pointer(p_values, vals, [info%nnz])
        col_ind = indices
        values = vals
      end if
    end if
    if (c_associated(tmp)) then
      if (sparsetc_matrix_destroy(tmp) /= SPARSETC_STATUS_SUCCESS) status = SPARSETC_STATUS_INTERNAL_ERROR
    end if
  end function

  integer(c_int32_t) function get_csr_i32_r32(handle, matrix, row_ptr, col_ind, values, base) result(status)
    type(c_ptr), intent(in) :: handle, matrix
    integer(c_int32_t), allocatable, intent(out) :: row_ptr(:), col_ind(:)
    real(c_float), allocatable, intent(out) :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    type(c_ptr) :: tmp, p_offsets, p_indices, p_values
    type(sparsetc_matrix_info_t) :: info
    integer(c_int32_t), pointer :: offsets(:), indices(:)
    real(c_float), pointer :: vals(:)
    status = export_csr(handle, matrix, SPARSETC_INDEX_32, SPARSETC_VALUE_F32, base_or_one(base), tmp, info, &
        p_offsets, p_indices, p_values)
    if (status == SPARSETC_STATUS_SUCCESS) then
      call c_f_pointer(p_offsets, offsets, [info%rows + 1])
      row_ptr = offsets
      allocate(col_ind(info%nnz), values(info%nnz))
      if (info%nnz > 0) then
        call c_f_pointer(p_indices, indices, [info%nnz])
        call c_f_pointer(p_values, vals, [info%nnz])
        col_ind = indices
        values = vals
      end if
    end if
    if (c_associated(tmp)) then
      if (sparsetc_matrix_destroy(tmp) /= SPARSETC_STATUS_SUCCESS) status = SPARSETC_STATUS_INTERNAL_ERROR
    end if
  end function

  integer(c_int32_t) function get_csr_i64_r64(handle, matrix, row_ptr, col_ind, values, base) result(status)
    type(c_ptr), intent(in) :: handle, matrix
    integer(c_int64_t), allocatable, intent(out) :: row_ptr(:), col_ind(:)
    real(c_double), allocatable, intent(out) :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    type(c_ptr) :: tmp, p_offsets, p_indices, p_values
    type(sparsetc_matrix_info_t) :: info
    integer(c_int64_t), pointer :: offsets(:), indices(:)
    real(c_double), pointer :: vals(:)
    status = export_csr(handle, matrix, SPARSETC_INDEX_64, SPARSETC_VALUE_F64, base_or_one(base), tmp, info, &
        p_offsets, p_indices, p_values)
    if (status == SPARSETC_STATUS_SUCCESS) then
      call c_f_pointer(p_offsets, offsets, [info%rows + 1])
      row_ptr = offsets
      allocate(col_ind(info%nnz), values(info%nnz))
      if (info%nnz > 0) then
        call c_f_pointer(p_indices, indices, [info%nnz])
        call c_f_pointer(p_values, vals, [info%nnz])
        col_ind = indices
        values = vals
      end if
    end if
    if (c_associated(tmp)) then
      if (sparsetc_matrix_destroy(tmp) /= SPARSETC_STATUS_SUCCESS) status = SPARSETC_STATUS_INTERNAL_ERROR
    end if
  end function

  integer(c_int32_t) function get_csr_i64_r32(handle, matrix, row_ptr, col_ind, values, base) result(status)
    type(c_ptr), intent(in) :: handle, matrix
    integer(c_int64_t), allocatable, intent(out) :: row_ptr(:), col_ind(:)
    real(c_float), allocatable, intent(out) :: values(:)
    integer(c_int32_t), intent(in), optional :: base
    type(c_ptr) :: tmp, p_offsets, p_indices, p_values
    type(sparsetc_matrix_info_t) :: info
    integer(c_int64_t), pointer :: offsets(:), indices(:)
    real(c_float), pointer :: vals(:)
    status = export_csr(handle, matrix, SPARSETC_INDEX_64, SPARSETC_VALUE_F32, base_or_one(base), tmp, info, &
        p_offsets, p_indices, p_values)
    if (status == SPARSETC_STATUS_SUCCESS) then
      call c_f_pointer(p_offsets, offsets, [info%rows + 1])
      row_ptr = offsets
      allocate(col_ind(info%nnz), values(info%nnz))
      if (info%nnz > 0) then
        call c_f_pointer(p_indices, indices, [info%nnz])
        call c_f_pointer(p_values, vals, [info%nnz])
        col_ind = indices
        values = vals
      end if
    end if
    if (c_associated(tmp)) then
      if (sparsetc_matrix_destroy(tmp) /= SPARSETC_STATUS_SUCCESS) status = SPARSETC_STATUS_INTERNAL_ERROR
    end if
  end function

end module sparsetc

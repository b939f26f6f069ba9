! The Fortran bindings on the CPU backend, in Fortran's own conventions: one-based CSR and COO
! matrices, column-major dense arrays. SpMM (plan and one-shot, transposed, float and double)
! and SpGEMM (with plan reuse after new values) are checked against products computed by hand
! here; a bad one-based index must fail with its status and a message in one-based numbering.
! Exits non-zero on any difference.
program test_sparsetc
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan, ieee_is_nan
  use sparsetc
  implicit none

  integer :: failures = 0
  type(c_ptr) :: handle, A
  integer(c_int32_t) :: abi, backend

  ! A = [1 0 2]
  !     [0 0 0]      4x3, one empty row; one-based CSR
  !     [3 4 0]
  !     [0 5 6]
  integer(c_int32_t), parameter :: a_ptr(5) = [1, 3, 3, 5, 7]
  integer(c_int32_t), parameter :: a_col(6) = [1, 3, 1, 2, 2, 3]
  real(c_double), parameter :: a_val(6) = [1, 2, 3, 4, 5, 6]
  real(c_double), parameter :: a_dense(4, 3) = reshape([1, 0, 3, 0, 0, 0, 4, 5, 2, 0, 0, 6], [4, 3])

  call expect(sparsetc_get_abi_version(abi) == SPARSETC_STATUS_SUCCESS, 'sparsetc_get_abi_version')
  call expect(abi == SPARSETC_FORTRAN_ABI_VERSION, 'ABI version of the library matches the bindings')
  call expect(index(sparsetc_build_info(), 'sparsetc ') == 1, 'build information')
  call expect(sparsetc_status_name(SPARSETC_STATUS_INVALID_INDEX) == 'SPARSETC_STATUS_INVALID_INDEX', 'status name')

  call sparsetc_check(sparsetc_create_with_backend(handle, SPARSETC_BACKEND_CPU, 0), c_null_ptr, 'create')
  call sparsetc_check(sparsetc_get_backend(handle, backend), handle)
  call expect(backend == SPARSETC_BACKEND_CPU, 'CPU backend')
  call sparsetc_check(sparsetc_set_validation(handle, SPARSETC_VALIDATE_VALUES), handle)
  call sparsetc_check(sparsetc_set_num_threads(handle, 2), handle)

  call sparsetc_check(sparsetc_create_csr(handle, A, 4, 3, a_ptr, a_col, a_val), handle, 'create_csr')
  call matrix_description(A)
  call spmm_plan_column_major(A)
  call spmm_one_shot_transposed(A)
  call spmm_single_precision_coo()
  call spgemm_with_reuse(A)
  call spgemm_of_two_matrices(A)
  call one_based_errors()

  call sparsetc_check(sparsetc_matrix_destroy(A), c_null_ptr)
  call sparsetc_check(sparsetc_destroy(handle), c_null_ptr)
  if (failures > 0) then
    write(*, '(i0, a)') failures, ' checks failed'
    error stop 1
  end if
  write(*, '(a)') 'fortran: all checks passed'

contains

  subroutine expect(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
      write(*, '(a)') 'check failed: ' // what
      failures = failures + 1
    end if
  end subroutine

  subroutine matrix_description(matrix)
    type(c_ptr), intent(in) :: matrix
    type(sparsetc_matrix_info_t) :: info
    info%struct_size = c_sizeof(info)
    call sparsetc_check(sparsetc_matrix_get_info(matrix, info), c_null_ptr)
    call expect(info%rows == 4 .and. info%cols == 3 .and. info%nnz == 6, 'info: shape and nnz')
    call expect(info%base == SPARSETC_BASE_ONE .and. info%format == SPARSETC_FORMAT_CSR, 'info: one-based CSR')
    call expect(info%value_type == SPARSETC_VALUE_F64 .and. info%ownership == SPARSETC_COPY, 'info: types')
  end subroutine

  ! C = 2 A B - C on column-major arrays, through a plan executed twice.
  subroutine spmm_plan_column_major(matrix)
    type(c_ptr), intent(in) :: matrix
    integer, parameter :: n = 5
    real(c_double), target :: b(3, n), c(4, n), want(4, n)
    type(c_ptr) :: db, dc, plan
    integer(c_int32_t) :: alg
    character(len=128) :: reason
    integer :: i, j, round
    do j = 1, n
      do i = 1, 3
        b(i, j) = real(mod(i + 3 * j, 7), c_double) - 2.5_c_double
      end do
    end do
    call sparsetc_check(sparsetc_dense_from_array(handle, db, b), handle, 'dense b')
    call sparsetc_check(sparsetc_dense_from_array(handle, dc, c), handle, 'dense c')
    call sparsetc_check(sparsetc_spmm_plan_create(handle, plan, SPARSETC_OP_NON_TRANSPOSE, matrix, db, dc, &
        SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPMM_ALG_AUTO), handle, 'spmm plan')
    call sparsetc_check(sparsetc_spmm_plan_get_alg(plan, alg, reason), handle)
    call expect(alg == SPARSETC_SPMM_ALG_CPU, 'SpMM plan runs on the CPU engine')
    call expect(index(reason, 'CPU') > 0, 'SpMM plan reason: ' // trim(reason))
    do round = 1, 2
      c = 1
      b(2, :) = b(2, :) + round       ! new contents of B between executions
      call sparsetc_check(sparsetc_spmm_execute(plan, 2.0_c_double, db, -1.0_c_double, dc, c_null_ptr, &
          0_c_size_t), handle, 'spmm execute')
      want = 2 * matmul(a_dense, b) - 1
      call expect(maxval(abs(c - want)) < 1d-12, 'SpMM with a plan, column-major, alpha 2, beta -1')
    end do
    ! by hand for the first column of round 2: b(:,1) = [1.5, 2.5, -0.5] + ... checked via row 1:
    ! c(1,1) = 2 (1 b(1,1) + 2 b(3,1)) - 1
    call expect(abs(c(1, 1) - (2 * (b(1, 1) + 2 * b(3, 1)) - 1)) < 1d-12, 'SpMM entry (1,1) by hand')
    call expect(all(abs(c(2, :) + 1) < 1d-12), 'SpMM: the empty row of A gives -C')
    call sparsetc_check(sparsetc_spmm_plan_destroy(plan), c_null_ptr)
    call sparsetc_check(sparsetc_dense_destroy(db), c_null_ptr)
    call sparsetc_check(sparsetc_dense_destroy(dc), c_null_ptr)
  end subroutine

  ! C = A^T B with the one-shot call; beta 0 must overwrite a NaN-poisoned C entirely.
  subroutine spmm_one_shot_transposed(matrix)
    type(c_ptr), intent(in) :: matrix
    real(c_double), target :: b(4, 2), c(3, 2)
    type(c_ptr) :: db, dc
    b = reshape([1, 2, 3, 4, -1, 0, 1, 0], [4, 2])
    c = ieee_value(1.0_c_double, ieee_quiet_nan)
    call sparsetc_check(sparsetc_dense_from_array(handle, db, b), handle)
    call sparsetc_check(sparsetc_dense_from_array(handle, dc, c), handle)
    call sparsetc_check(sparsetc_spmm(handle, SPARSETC_OP_TRANSPOSE, 1.0_c_double, matrix, db, 0.0_c_double, dc, &
        SPARSETC_COMPUTE_64F, SPARSETC_SPMM_ALG_CPU), handle, 'spmm one-shot')
    call expect(.not. any(ieee_is_nan(c)), 'SpMM writes every element of C')
    ! A^T [1 2 3 4]^T = [1+9, 12+20, 2+24] = [10, 32, 26]; A^T [-1 0 1 0]^T = [-1+3, 4, -2] = [2, 4, -2]
    call expect(all(abs(c(:, 1) - [10, 32, 26]) < 1d-12), 'A^T b, column 1 by hand')
    call expect(all(abs(c(:, 2) - [2, 4, -2]) < 1d-12), 'A^T b, column 2 by hand')
    call sparsetc_check(sparsetc_dense_destroy(db), c_null_ptr)
    call sparsetc_check(sparsetc_dense_destroy(dc), c_null_ptr)
  end subroutine

  ! Single precision from one-based COO triplets in any order, int64 indices.
  subroutine spmm_single_precision_coo()
    integer(c_int64_t), parameter :: rows(6) = [4, 1, 3, 1, 4, 3]
    integer(c_int64_t), parameter :: cols(6) = [3, 1, 2, 3, 2, 1]
    real(c_float), parameter :: vals(6) = [6, 1, 4, 2, 5, 3]
    type(c_ptr) :: coo, db, dc
    real(c_float), target :: b(3, 3), c(4, 3)
    b = reshape([1, 0, 0, 0, 1, 0, 0, 0, 1], [3, 3])   ! identity: C must equal A
    call sparsetc_check(sparsetc_create_coo(handle, coo, 4, 3, rows, cols, vals), handle, 'create_coo')
    call sparsetc_check(sparsetc_dense_from_array(handle, db, b), handle)
    call sparsetc_check(sparsetc_dense_from_array(handle, dc, c), handle)
    call sparsetc_check(sparsetc_spmm(handle, SPARSETC_OP_NON_TRANSPOSE, 1.0_c_double, coo, db, 0.0_c_double, dc, &
        SPARSETC_COMPUTE_32F, SPARSETC_SPMM_ALG_AUTO), handle, 'spmm f32')
    call expect(all(abs(c - real(a_dense, c_float)) < 1e-6), 'f32 COO times the identity is A')
    call sparsetc_check(sparsetc_dense_destroy(db), c_null_ptr)
    call sparsetc_check(sparsetc_dense_destroy(dc), c_null_ptr)
    call sparsetc_check(sparsetc_matrix_destroy(coo), c_null_ptr)
  end subroutine

  ! C = A^T A through a plan; then A's values tripled and C recomputed with the same pattern.
  subroutine spgemm_with_reuse(matrix)
    type(c_ptr), intent(in) :: matrix
    type(c_ptr) :: plan, c
    integer(c_int64_t) :: nnz, products
    integer(c_size_t) :: memory
    integer(c_int32_t), allocatable :: c_offsets(:), c_col(:)
    real(c_double), allocatable :: c_val(:)
    ! A^T A by hand (columns of A: [1 0 3 0], [0 0 4 5], [2 0 0 6])
    real(c_double), parameter :: ata(9) = [10, 12, 2, 12, 41, 30, 2, 30, 40]
    real(c_double) :: factor
    integer :: round
    c = c_null_ptr
    call sparsetc_check(sparsetc_spgemm_plan_create(handle, plan, SPARSETC_OP_TRANSPOSE, matrix, &
        SPARSETC_OP_NON_TRANSPOSE, matrix, SPARSETC_COMPUTE_64F, SPARSETC_SPGEMM_ALG_AUTO, c_null_ptr), handle, &
        'spgemm plan')
    call sparsetc_check(sparsetc_spgemm_plan_get_estimate(plan, products, memory), handle)
    call expect(products == 12, 'SpGEMM products: 4 + 0 + 4 + 4')
    call sparsetc_check(sparsetc_spgemm_symbolic(plan, nnz), handle, 'symbolic')
    call expect(nnz == 9, 'A^T A is a full 3x3')
    do round = 1, 2
      factor = merge(1.0_c_double, 3.0_c_double, round == 1)
      call sparsetc_check(sparsetc_spgemm_numeric(plan, c), handle, 'numeric')
      call sparsetc_check(sparsetc_matrix_get_csr(handle, c, c_offsets, c_col, c_val), handle, 'get_csr')
      call expect(all(c_offsets == [1, 4, 7, 10]), 'one-based row offsets of C')
      call expect(all(c_col == [1, 2, 3, 1, 2, 3, 1, 2, 3]), 'one-based, sorted column indices of C')
      call expect(all(abs(c_val - factor**2 * ata) < 1d-12), 'values of A^T A by hand')
      call sparsetc_check(sparsetc_set_values(handle, matrix, 3 * a_val), handle, 'set_values')
    end do
    call sparsetc_check(sparsetc_set_values(handle, matrix, a_val), handle)
    call sparsetc_check(sparsetc_spgemm_plan_destroy(plan), c_null_ptr)
    call sparsetc_check(sparsetc_matrix_destroy(c), c_null_ptr)
  end subroutine

  ! C = A B with B 3x2 one-based CSR, and the result as int64 zero-based arrays on request.
  subroutine spgemm_of_two_matrices(matrix)
    type(c_ptr), intent(in) :: matrix
    ! B = [1 0]
    !     [0 2]
    !     [1 1]
    integer(c_int32_t), parameter :: b_ptr(4) = [1, 2, 3, 5]
    integer(c_int32_t), parameter :: b_col(4) = [1, 2, 1, 2]
    real(c_double), parameter :: b_val(4) = [1, 2, 1, 1]
    type(c_ptr) :: b, c
    integer(c_int64_t), allocatable :: c_offsets(:), c_col(:)
    real(c_double), allocatable :: c_val(:)
    call sparsetc_check(sparsetc_create_csr(handle, b, 3, 2, b_ptr, b_col, b_val), handle)
    c = c_null_ptr
    call sparsetc_check(sparsetc_spgemm(handle, SPARSETC_OP_NON_TRANSPOSE, matrix, SPARSETC_OP_NON_TRANSPOSE, b, &
        SPARSETC_COMPUTE_DEFAULT, SPARSETC_SPGEMM_ALG_AUTO, c), handle, 'spgemm one-shot')
    ! A B = [3 2; 0 0; 3 8; 6 16]
    call sparsetc_check(sparsetc_matrix_get_csr(handle, c, c_offsets, c_col, c_val, base=SPARSETC_BASE_ZERO), handle)
    call expect(all(c_offsets == [0, 2, 2, 4, 6]), 'zero-based offsets of A B')
    call expect(all(c_col == [0, 1, 0, 1, 0, 1]), 'zero-based columns of A B')
    call expect(all(abs(c_val - [3, 2, 3, 8, 6, 16]) < 1d-12), 'values of A B by hand')
    call sparsetc_check(sparsetc_matrix_destroy(c), c_null_ptr)
    call sparsetc_check(sparsetc_matrix_destroy(b), c_null_ptr)
  end subroutine

  ! A column index past the end, in one-based numbering: the status, no matrix, and a message
  ! that names the entry in the caller's numbering.
  subroutine one_based_errors()
    integer(c_int32_t), parameter :: bad_col(6) = [1, 3, 1, 2, 2, 4]
    type(c_ptr) :: bad
    integer(c_int32_t) :: status
    character(len=:), allocatable :: message
    status = sparsetc_create_csr(handle, bad, 4, 3, a_ptr, bad_col, a_val)
    call expect(status == SPARSETC_STATUS_INVALID_INDEX, 'out-of-range index: ' // sparsetc_status_name(status))
    call expect(.not. c_associated(bad), 'no matrix after a failure')
    message = sparsetc_last_error(handle)
    call expect(index(message, '1-based') > 0, 'message in one-based numbering: ' // message)
    status = sparsetc_matrix_read_mtx(handle, '/nonexistent/matrix.mtx', SPARSETC_VALUE_F64, SPARSETC_INDEX_32, bad)
    call expect(status == SPARSETC_STATUS_IO_ERROR, 'missing file: ' // sparsetc_status_name(status))
    call expect(index(sparsetc_last_error(c_null_ptr), 'nonexistent') > 0, 'thread message names the file')
  end subroutine

end program test_sparsetc

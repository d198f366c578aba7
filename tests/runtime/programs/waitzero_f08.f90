! waitzero_f.F90 through the `mpi_f08` bindings: same calls, same order.
!
! Usage: waitzero_f08 REPS
program waitzero_f08
  use mpi_f08
  implicit none
  integer :: me, reps, i, idx, outc, done, cls
  integer :: ind(2), nt(4)
  type(MPI_Request) :: rq(2)
  type(MPI_Status) :: st(2)
  logical :: flag
  character :: sbuf(8), rbuf(8)
  character(len=32) :: arg

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call get_command_argument(1, arg)
  read (arg, *) reps
  sbuf = 'x'
  nt = 0
  do i = 1, reps
    ! two local calls, recorded from Fortran like from C
    call MPI_Comm_test_inter(MPI_COMM_WORLD, flag)
    call MPI_Error_class(MPI_ERR_COUNT, cls)
    ! zero requests
    call MPI_Waitall(0, rq, st)
    call MPI_Waitany(0, rq, idx, st(1))
    call MPI_Waitsome(0, rq, outc, ind, st)
    call MPI_Testall(0, rq, flag, st)
    call MPI_Testany(0, rq, idx, flag, st(1))
    call MPI_Testsome(0, rq, outc, ind, st)
    ! null requests only
    rq = MPI_REQUEST_NULL
    call MPI_Waitall(2, rq, st)
    call MPI_Waitany(2, rq, idx, st(1))
    call MPI_Waitsome(2, rq, outc, ind, st)
    call MPI_Testall(2, rq, flag, st)
    call MPI_Testany(2, rq, idx, flag, st(1))
    call MPI_Testsome(2, rq, outc, ind, st)
    ! real requests: 8 bytes to itself, each completion credited
    call post(rq)
    call MPI_Waitall(2, rq, st)
    call post(rq)
    call MPI_Waitany(2, rq, idx, st(1))
    call MPI_Waitany(2, rq, idx, st(1))
    call post(rq)
    done = 0
    do while (done < 2)
      call MPI_Waitsome(2, rq, outc, ind, st)
      done = done + outc
      nt(1) = nt(1) + 1
    end do
    call post(rq)
    flag = .false.
    do while (.not. flag)
      call MPI_Testall(2, rq, flag, st)
      nt(2) = nt(2) + 1
    end do
    call post(rq)
    done = 0
    do while (done < 2)
      call MPI_Testany(2, rq, idx, flag, st(1))
      if (flag .and. idx /= MPI_UNDEFINED) done = done + 1
      nt(3) = nt(3) + 1
    end do
    call post(rq)
    done = 0
    do while (done < 2)
      call MPI_Testsome(2, rq, outc, ind, st)
      done = done + outc
      nt(4) = nt(4) + 1
    end do
  end do
  print '(a,i0,1x,i0)', 'calls MPI_Waitsome ', me, nt(1)
  print '(a,i0,1x,i0)', 'calls MPI_Testall ', me, nt(2)
  print '(a,i0,1x,i0)', 'calls MPI_Testany ', me, nt(3)
  print '(a,i0,1x,i0)', 'calls MPI_Testsome ', me, nt(4)
  call MPI_Finalize()

contains

  subroutine post(r)
    type(MPI_Request), intent(out) :: r(2)
    call MPI_Irecv(rbuf, 8, MPI_CHARACTER, me, 7, MPI_COMM_WORLD, r(1))
    call MPI_Isend(sbuf, 8, MPI_CHARACTER, me, 7, MPI_COMM_WORLD, r(2))
  end subroutine post
end program waitzero_f08

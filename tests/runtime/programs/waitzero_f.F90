! Every Wait and Test form given zero requests, then only null requests,
! then real ones, and two local calls, REPS times.  Open MPI's Fortran bindings answer the first
! kind without entering the C function; every call must still count once.
! Built with -DUSE_MPIF_H it includes mpif.h, otherwise it uses the `mpi`
! module; waitzero_f08.f90 is the same program through `use mpi_f08`.
! Loops whose length depends on timing print "calls <function> <rank> <n>".
!
! Usage: waitzero_f REPS
program waitzero_f
#ifndef USE_MPIF_H
  use mpi
#endif
  implicit none
#ifdef USE_MPIF_H
  include 'mpif.h'
#endif
  integer :: ierr, me, reps, i, idx, outc, done, cls
  integer :: rq(2), st(MPI_STATUS_SIZE, 2), ind(2), nt(4)
  logical :: flag
  character :: sbuf(8), rbuf(8)
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call get_command_argument(1, arg)
  read (arg, *) reps
  sbuf = 'x'
  nt = 0
  do i = 1, reps
    ! two local calls, recorded from Fortran like from C
    call MPI_Comm_test_inter(MPI_COMM_WORLD, flag, ierr)
    call MPI_Error_class(MPI_ERR_COUNT, cls, ierr)
    ! zero requests
    call MPI_Waitall(0, rq, st, ierr)
    call MPI_Waitany(0, rq, idx, st(:, 1), ierr)
    call MPI_Waitsome(0, rq, outc, ind, st, ierr)
    call MPI_Testall(0, rq, flag, st, ierr)
    call MPI_Testany(0, rq, idx, flag, st(:, 1), ierr)
    call MPI_Testsome(0, rq, outc, ind, st, ierr)
    ! null requests only
    rq = MPI_REQUEST_NULL
    call MPI_Waitall(2, rq, st, ierr)
    call MPI_Waitany(2, rq, idx, st(:, 1), ierr)
    call MPI_Waitsome(2, rq, outc, ind, st, ierr)
    call MPI_Testall(2, rq, flag, st, ierr)
    call MPI_Testany(2, rq, idx, flag, st(:, 1), ierr)
    call MPI_Testsome(2, rq, outc, ind, st, ierr)
    ! real requests: 8 bytes to itself, each completion credited
    call post(rq)
    call MPI_Waitall(2, rq, st, ierr)
    call post(rq)
    call MPI_Waitany(2, rq, idx, st(:, 1), ierr)
    call MPI_Waitany(2, rq, idx, st(:, 1), ierr)
    call post(rq)
    done = 0
    do while (done < 2)
      call MPI_Waitsome(2, rq, outc, ind, st, ierr)
      done = done + outc
      nt(1) = nt(1) + 1
    end do
    call post(rq)
    flag = .false.
    do while (.not. flag)
      call MPI_Testall(2, rq, flag, st, ierr)
      nt(2) = nt(2) + 1
    end do
    call post(rq)
    done = 0
    do while (done < 2)
      call MPI_Testany(2, rq, idx, flag, st(:, 1), ierr)
      if (flag .and. idx /= MPI_UNDEFINED) done = done + 1
      nt(3) = nt(3) + 1
    end do
    call post(rq)
    done = 0
    do while (done < 2)
      call MPI_Testsome(2, rq, outc, ind, st, ierr)
      done = done + outc
      nt(4) = nt(4) + 1
    end do
  end do
  print '(a,i0,1x,i0)', 'calls MPI_Waitsome ', me, nt(1)
  print '(a,i0,1x,i0)', 'calls MPI_Testall ', me, nt(2)
  print '(a,i0,1x,i0)', 'calls MPI_Testany ', me, nt(3)
  print '(a,i0,1x,i0)', 'calls MPI_Testsome ', me, nt(4)
  call MPI_Finalize(ierr)

contains

  subroutine post(r)
    integer, intent(out) :: r(2)
    call MPI_Irecv(rbuf, 8, MPI_CHARACTER, me, 7, MPI_COMM_WORLD, r(1), ierr)
    call MPI_Isend(sbuf, 8, MPI_CHARACTER, me, 7, MPI_COMM_WORLD, r(2), ierr)
  end subroutine post
end program waitzero_f

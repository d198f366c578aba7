! Call sites from Fortran, one source for two bindings (-DUSE_MPIF_H: mpif.h,
! otherwise `use mpi`); sites_f08.f90 is the same through `use mpi_f08`.
! Each tagged line's calls must be found at that line, not in the MPI
! library's binding.  Usage: sites_f A   (A Allreduce at SITE_A)
program sites_f
#ifndef USE_MPIF_H
  use mpi
#endif
  implicit none
#ifdef USE_MPIF_H
  include 'mpif.h'
#endif
  integer :: ierr, a, i, rq(1), st(MPI_STATUS_SIZE, 1)
  double precision :: x(1)
  character(len=32) :: arg

  call MPI_Init(ierr)
  call get_command_argument(1, arg)
  read (arg, *) a
  x = 1d0
  do i = 1, a
    call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr) ! SITE_A
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr) ! SITE_C
  call MPI_Waitall(0, rq, st, ierr) ! SITE_W
  call MPI_Finalize(ierr)
end program sites_f

! sites_f.F90 through `use mpi_f08`: same calls, same tags.
program sites_f08
  use mpi_f08
  implicit none
  integer :: a, i
  type(MPI_Request) :: rq(1)
  type(MPI_Status) :: st(1)
  double precision :: x(1)
  character(len=32) :: arg

  call MPI_Init()
  call get_command_argument(1, arg)
  read (arg, *) a
  x = 1d0
  do i = 1, a
    call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD) ! SITE_A
  end do
  call MPI_Barrier(MPI_COMM_WORLD) ! SITE_C
  call MPI_Waitall(0, rq, st) ! SITE_W
  call MPI_Finalize()
end program sites_f08

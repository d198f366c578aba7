! Large-count sends from Fortran (mpi_f08): counts of kind MPI_COUNT_KIND
! select MPI-4's large-count procedures, which MPICH implements through the
! C MPI_Send_c family.  usage: largecount_f08 REPS N
program largecount_f08
  use mpi_f08
  implicit none
  integer :: rank, size, r, reps, right, left
  integer(kind=MPI_COUNT_KIND) :: n
  character(len=32) :: arg
  character, allocatable :: sbuf(:), rbuf(:)
  type(MPI_Request) :: rq(2)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  call get_command_argument(1, arg); read (arg, *) reps
  call get_command_argument(2, arg); read (arg, *) n
  allocate (sbuf(n), rbuf(n))
  right = mod(rank + 1, size); left = mod(rank + size - 1, size)
  do r = 1, reps
    call MPI_Irecv(rbuf, n, MPI_BYTE, left, 1, MPI_COMM_WORLD, rq(1))
    call MPI_Isend(sbuf, n, MPI_BYTE, right, 1, MPI_COMM_WORLD, rq(2))
    call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE)
    call MPI_Send(sbuf, n, MPI_BYTE, right, 2, MPI_COMM_WORLD)
    call MPI_Recv(rbuf, n, MPI_BYTE, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end do
  call MPI_Finalize()
end program

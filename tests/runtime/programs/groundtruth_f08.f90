! groundtruth_f.F90 through the `mpi_f08` bindings: same calls, same order.
!
! Usage: groundtruth_f08 REPS COUNT SIZE...   (SIZE in bytes, MPI_CHARACTER)
program groundtruth_f08
  use mpi_f08
  implicit none
  integer :: nproc, me, left, right, partner, reps, cnt, nsizes, maxs, i, k, q, nq
  type(MPI_Request) :: rq(2)
  type(MPI_Status) :: st
  type(MPI_Comm) :: sub
  type(MPI_Datatype) :: absolute
  integer :: blen(1)
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)
  integer, allocatable :: sizes(:)
  character, allocatable :: sbuf(:), rbuf(:)
  double precision, allocatable :: da(:), db(:)
  character(len=32) :: arg

  call MPI_Init()
  call MPI_Comm_size(MPI_COMM_WORLD, nproc)
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  nsizes = command_argument_count() - 2
  call get_command_argument(1, arg)
  read (arg, *) reps
  call get_command_argument(2, arg)
  read (arg, *) cnt
  allocate (sizes(nsizes))
  do i = 1, nsizes
    call get_command_argument(2 + i, arg)
    read (arg, *) sizes(i)
  end do
  maxs = maxval(sizes)
  allocate (sbuf(maxs + 64), rbuf(maxs + 64), da(cnt + 1), db(cnt + 1))
  sbuf = 'x'
  da = 1d0
  right = mod(me + 1, nproc)
  left = mod(me + nproc - 1, nproc)
  partner = ieor(me, 1)

  if (partner < nproc) then
    do i = 1, nsizes
      if (mod(me, 2) == 0) then
        call MPI_Send(sbuf, sizes(i), MPI_CHARACTER, partner, 1, MPI_COMM_WORLD)
        call MPI_Recv(rbuf, sizes(i) + 16, MPI_CHARACTER, partner, 2, MPI_COMM_WORLD, st)
      else
        call MPI_Recv(rbuf, sizes(i) + 16, MPI_CHARACTER, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
        call MPI_Send(sbuf, sizes(i), MPI_CHARACTER, partner, 2, MPI_COMM_WORLD)
      end if
    end do
  end if

  do i = 1, nsizes
    call MPI_Irecv(rbuf, maxs + 16, MPI_CHARACTER, left, 3, MPI_COMM_WORLD, rq(1))
    call MPI_Isend(sbuf, sizes(i), MPI_CHARACTER, right, 3, MPI_COMM_WORLD, rq(2))
    call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE)
  end do
  do i = 1, nsizes
    call MPI_Sendrecv(sbuf, sizes(i), MPI_CHARACTER, right, 4, rbuf, maxs + 16, MPI_CHARACTER, left, 4, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end do

  do k = 1, reps
    call MPI_Allreduce(da, db, cnt, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call MPI_Allreduce(MPI_IN_PLACE, db, cnt, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  end do
  call MPI_Bcast(da, cnt, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
  ! The same broadcast through MPI_BOTTOM and a type holding da's absolute address.
  call MPI_Get_address(da, addr(1))
  blen(1) = cnt
  call MPI_Type_create_hindexed(1, blen, addr, MPI_DOUBLE_PRECISION, absolute)
  call MPI_Type_commit(absolute)
  call MPI_Bcast(MPI_BOTTOM, 1, absolute, 0, MPI_COMM_WORLD)
  call MPI_Type_free(absolute)
  call MPI_Barrier(MPI_COMM_WORLD)

  call MPI_Comm_split(MPI_COMM_WORLD, mod(me, 2), me, sub)
  call MPI_Comm_rank(sub, q)
  call MPI_Comm_size(sub, nq)
  call MPI_Irecv(rbuf, maxs + 16, MPI_CHARACTER, mod(q + nq - 1, nq), 5, sub, rq(1))
  call MPI_Isend(sbuf, maxs, MPI_CHARACTER, mod(q + 1, nq), 5, sub, rq(2))
  call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE)
  call MPI_Comm_free(sub)
  call MPI_Finalize()
end program groundtruth_f08

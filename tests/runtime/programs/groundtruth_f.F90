! Ground truth in Fortran, one source for two bindings: built with
! -DUSE_MPIF_H it includes mpif.h, otherwise it uses the `mpi` module.
! groundtruth_f08.f90 is the same program through `use mpi_f08`;
! tests/support/expect.py (groundtruth_fortran) mirrors both.
!
! Usage: groundtruth_f REPS COUNT SIZE...   (SIZE in bytes, MPI_CHARACTER)
program groundtruth_f
#ifndef USE_MPIF_H
  use mpi
#endif
  implicit none
#ifdef USE_MPIF_H
  include 'mpif.h'
#endif
  integer :: ierr, nproc, me, left, right, partner, reps, cnt, nsizes, maxs, i, k, sub, q, nq
  integer :: rq(2), st(MPI_STATUS_SIZE), absolute, blen(1)
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)
  integer, allocatable :: sizes(:)
  character, allocatable :: sbuf(:), rbuf(:)
  double precision, allocatable :: da(:), db(:)
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
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

  ! Blocking pairs (0,1), (2,3)...; receives posted larger than the message.
  if (partner < nproc) then
    do i = 1, nsizes
      if (mod(me, 2) == 0) then
        call MPI_Send(sbuf, sizes(i), MPI_CHARACTER, partner, 1, MPI_COMM_WORLD, ierr)
        call MPI_Recv(rbuf, sizes(i) + 16, MPI_CHARACTER, partner, 2, MPI_COMM_WORLD, st, ierr)
      else
        call MPI_Recv(rbuf, sizes(i) + 16, MPI_CHARACTER, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        call MPI_Send(sbuf, sizes(i), MPI_CHARACTER, partner, 2, MPI_COMM_WORLD, ierr)
      end if
    end do
  end if

  ! Ring right: Irecv (posted larger) + Isend, Waitall with MPI_STATUSES_IGNORE.
  do i = 1, nsizes
    call MPI_Irecv(rbuf, maxs + 16, MPI_CHARACTER, left, 3, MPI_COMM_WORLD, rq(1), ierr)
    call MPI_Isend(sbuf, sizes(i), MPI_CHARACTER, right, 3, MPI_COMM_WORLD, rq(2), ierr)
    call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE, ierr)
  end do
  do i = 1, nsizes
    call MPI_Sendrecv(sbuf, sizes(i), MPI_CHARACTER, right, 4, rbuf, maxs + 16, MPI_CHARACTER, left, 4, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end do

  do k = 1, reps
    call MPI_Allreduce(da, db, cnt, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Allreduce(MPI_IN_PLACE, db, cnt, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  call MPI_Bcast(da, cnt, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  ! The same broadcast through MPI_BOTTOM and a type holding da's absolute address.
  call MPI_Get_address(da, addr(1), ierr)
  blen(1) = cnt
  call MPI_Type_create_hindexed(1, blen, addr, MPI_DOUBLE_PRECISION, absolute, ierr)
  call MPI_Type_commit(absolute, ierr)
  call MPI_Bcast(MPI_BOTTOM, 1, absolute, 0, MPI_COMM_WORLD, ierr)
  call MPI_Type_free(absolute, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)

  ! Ring right of the largest size inside the parity sub-communicator.
  call MPI_Comm_split(MPI_COMM_WORLD, mod(me, 2), me, sub, ierr)
  call MPI_Comm_rank(sub, q, ierr)
  call MPI_Comm_size(sub, nq, ierr)
  call MPI_Irecv(rbuf, maxs + 16, MPI_CHARACTER, mod(q + nq - 1, nq), 5, sub, rq(1), ierr)
  call MPI_Isend(sbuf, maxs, MPI_CHARACTER, mod(q + 1, nq), 5, sub, rq(2), ierr)
  call MPI_Waitall(2, rq, MPI_STATUSES_IGNORE, ierr)
  call MPI_Comm_free(sub, ierr)
  call MPI_Finalize(ierr)
end program groundtruth_f

! Numbered phases from Fortran (tests/runtime/test_timeline.py): phase 2
! holds 3 Barriers, phase 5 holds 4 Allreduce of one double, then one
! Barrier outside phases.  MPI_PCONTROL takes the level alone in Fortran.
program phases_f
    implicit none
    include 'mpif.h'
    integer :: ierr, i
    double precision :: x, y
    call MPI_INIT(ierr)
    call MPI_PCONTROL(2)
    do i = 1, 3
        call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    end do
    call MPI_PCONTROL(5)
    x = 1.0d0
    do i = 1, 4
        call MPI_ALLREDUCE(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    end do
    call MPI_PCONTROL(-1)
    call MPI_BARRIER(MPI_COMM_WORLD, ierr)
    call MPI_FINALIZE(ierr)
end program phases_f

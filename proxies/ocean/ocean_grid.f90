! ocean: the decomposed grid. A global nx x ny grid, periodic in x (around
! the globe) and walled in y, split into px x py blocks; a land mask from
! analytic "continents"; and the halo exchange of one-cell-wide block edges
! with the up to four neighbouring blocks (Irecv/Isend/Waitall).
module ocean_grid
  use mpi_f08
  implicit none
  private
  public :: grid_t, grid_setup, choose_process_grid, halo_exchange, is_ocean

  integer, parameter :: dp = kind(1.0d0)

  type :: grid_t
     integer :: nx, ny, px, py, cx, cy
     integer :: i0, j0          ! global index of local (1,1) minus one
     integer :: nlx, nly        ! local block size
     integer :: east, west, north, south  ! ranks; MPI_PROC_NULL at walls
     integer :: nmsg            ! messages sent (= received) per halo exchange
     real(dp), allocatable :: sbuf(:,:), rbuf(:,:)   ! (max(nlx,nly), 4)
     type(MPI_Request) :: req(8)
     type(MPI_Status) :: stat(8)
  end type grid_t

  ! Message tags name the direction of travel, so two messages between the
  ! same pair of ranks (px = 2: east and west neighbour coincide) stay apart.
  integer, parameter :: TO_EAST = 1, TO_WEST = 2, TO_NORTH = 3, TO_SOUTH = 4

contains

  ! Picks px*py = nranks minimising the halo length ceil(nx/px) + ceil(ny/py)
  ! (ties: the smaller px). Deterministic, so tests can predict it.
  subroutine choose_process_grid(nx, ny, nranks, px, py)
    integer, intent(in) :: nx, ny, nranks
    integer, intent(out) :: px, py
    integer :: a, cost, best
    best = huge(best)
    px = nranks
    py = 1
    do a = 1, nranks
       if (mod(nranks, a) /= 0) cycle
       cost = (nx + a - 1) / a + (ny + nranks / a - 1) / (nranks / a)
       if (cost < best) then
          best = cost
          px = a
          py = nranks / a
       end if
    end do
  end subroutine choose_process_grid

  subroutine grid_setup(g, nx, ny, rank, nranks)
    type(grid_t), intent(out) :: g
    integer, intent(in) :: nx, ny, rank, nranks
    g%nx = nx
    g%ny = ny
    call choose_process_grid(nx, ny, nranks, g%px, g%py)
    g%cx = mod(rank, g%px)
    g%cy = rank / g%px
    g%i0 = g%cx * nx / g%px
    g%j0 = g%cy * ny / g%py
    g%nlx = (g%cx + 1) * nx / g%px - g%i0
    g%nly = (g%cy + 1) * ny / g%py - g%j0
    g%east = g%cy * g%px + mod(g%cx + 1, g%px)
    g%west = g%cy * g%px + mod(g%cx + g%px - 1, g%px)
    g%north = MPI_PROC_NULL
    g%south = MPI_PROC_NULL
    if (g%cy < g%py - 1) g%north = rank + g%px
    if (g%cy > 0) g%south = rank - g%px
    g%nmsg = 0
    if (g%px > 1) g%nmsg = 2
    if (g%north /= MPI_PROC_NULL) g%nmsg = g%nmsg + 1
    if (g%south /= MPI_PROC_NULL) g%nmsg = g%nmsg + 1
    allocate(g%sbuf(max(g%nlx, g%nly), 4), g%rbuf(max(g%nlx, g%nly), 4))
  end subroutine grid_setup

  ! Land: the two polar rows and three elliptical continents, one of which
  ! straddles the periodic seam. Defined on global indices, so every
  ! decomposition sees the same coastline.
  pure logical function is_ocean(nx, ny, i, j)
    integer, intent(in) :: nx, ny, i, j
    real(dp) :: x, y
    is_ocean = .false.
    if (j <= 1 .or. j >= ny) return
    x = (real(modulo(i - 1, nx), dp) + 0.5_dp) / nx
    y = (real(j - 1, dp) + 0.5_dp) / ny
    if (((x - 0.25_dp) / 0.08_dp)**2 + ((y - 0.55_dp) / 0.30_dp)**2 < 1.0_dp) return
    if (((x - 0.60_dp) / 0.12_dp)**2 + ((y - 0.35_dp) / 0.15_dp)**2 < 1.0_dp) return
    if ((min(x, 1.0_dp - x) / 0.05_dp)**2 + ((y - 0.70_dp) / 0.12_dp)**2 < 1.0_dp) return
    is_ocean = .true.
  end function is_ocean

  ! Fills the one-cell halo of f(0:nlx+1, 0:nly+1) from the neighbours. At
  ! the walls the halo is left as it is (land, zero). With px = 1 the
  ! periodic x-halo is a local copy and sends nothing.
  subroutine halo_exchange(g, f)
    type(grid_t), intent(inout) :: g
    real(dp), intent(inout) :: f(0:, 0:)
    integer :: n, nx, ny
    nx = g%nlx
    ny = g%nly
    n = 0
    if (g%px > 1) then
       call MPI_Irecv(g%rbuf(:, 1), ny, MPI_DOUBLE_PRECISION, g%west, TO_EAST, &
            MPI_COMM_WORLD, g%req(n + 1))
       call MPI_Irecv(g%rbuf(:, 2), ny, MPI_DOUBLE_PRECISION, g%east, TO_WEST, &
            MPI_COMM_WORLD, g%req(n + 2))
       n = n + 2
    end if
    if (g%south /= MPI_PROC_NULL) then
       n = n + 1
       call MPI_Irecv(g%rbuf(:, 3), nx, MPI_DOUBLE_PRECISION, g%south, TO_NORTH, &
            MPI_COMM_WORLD, g%req(n))
    end if
    if (g%north /= MPI_PROC_NULL) then
       n = n + 1
       call MPI_Irecv(g%rbuf(:, 4), nx, MPI_DOUBLE_PRECISION, g%north, TO_SOUTH, &
            MPI_COMM_WORLD, g%req(n))
    end if
    if (g%px > 1) then
       g%sbuf(1:ny, 1) = f(nx, 1:ny)
       g%sbuf(1:ny, 2) = f(1, 1:ny)
       call MPI_Isend(g%sbuf(:, 1), ny, MPI_DOUBLE_PRECISION, g%east, TO_EAST, &
            MPI_COMM_WORLD, g%req(n + 1))
       call MPI_Isend(g%sbuf(:, 2), ny, MPI_DOUBLE_PRECISION, g%west, TO_WEST, &
            MPI_COMM_WORLD, g%req(n + 2))
       n = n + 2
    else
       f(0, 1:ny) = f(nx, 1:ny)
       f(nx + 1, 1:ny) = f(1, 1:ny)
    end if
    if (g%north /= MPI_PROC_NULL) then
       n = n + 1
       g%sbuf(1:nx, 3) = f(1:nx, ny)
       call MPI_Isend(g%sbuf(:, 3), nx, MPI_DOUBLE_PRECISION, g%north, TO_NORTH, &
            MPI_COMM_WORLD, g%req(n))
    end if
    if (g%south /= MPI_PROC_NULL) then
       n = n + 1
       g%sbuf(1:nx, 4) = f(1:nx, 1)
       call MPI_Isend(g%sbuf(:, 4), nx, MPI_DOUBLE_PRECISION, g%south, TO_SOUTH, &
            MPI_COMM_WORLD, g%req(n))
    end if
    call MPI_Waitall(n, g%req, g%stat)
    if (g%px > 1) then
       f(0, 1:ny) = g%rbuf(1:ny, 1)
       f(nx + 1, 1:ny) = g%rbuf(1:ny, 2)
    end if
    if (g%south /= MPI_PROC_NULL) f(1:nx, 0) = g%rbuf(1:nx, 3)
    if (g%north /= MPI_PROC_NULL) f(1:nx, ny + 1) = g%rbuf(1:nx, 4)
  end subroutine halo_exchange

end module ocean_grid

! ocean: POPperf style proxy. Each time step solves the implicit barotropic
! (free-surface) equation
!     eta - alpha * div(H grad eta) = eta_old + dt * forcing
! on the ocean points of a masked, periodic-in-x grid with a diagonally
! preconditioned conjugate gradient. Every CG iteration does one halo
! exchange (before the operator) and two MPI_Allreduce of one double (p.Ap
! and r.z), the signature of POP's barotropic solver.
program ocean
  use mpi_f08
  use swproxy_mod
  use ocean_grid
  implicit none
  integer, parameter :: dp = kind(1.0d0)

  type(grid_t) :: g
  integer :: rank, nranks, nx, ny, steps, maxiter, step, iters, total_iters, status
  integer :: i, j, worst_iters
  real(dp) :: tol, alpha, t0, wall, relres, true_relres, worst_relres, bnorm
  real(dp), allocatable :: eta(:,:), rhs(:,:), wx(:,:), wy(:,:), diag(:,:), mask(:,:)
  real(dp), allocatable :: r(:,:), z(:,:), p(:,:), q(:,:)
  character(len=256) :: note
  character(len=32) :: check
  logical :: pass

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  call sw_args_begin_f('ocean')
  nx = sw_flag_long_f('--nx', 8, 100000, 32, 1024, 3600)
  ny = sw_flag_long_f('--ny', 8, 100000, 16, 512, 2400)
  steps = sw_flag_long_f('--steps', 1, 1000000, 2, 1, 50)
  maxiter = sw_flag_long_f('--maxiter', 1, 10000000, 1000, 5000, 20000)
  tol = sw_flag_double_f('--tol', 1.0e-14_dp, 1.0e-2_dp, 1.0e-8_dp, 1.0e-8_dp, 1.0e-10_dp)
  call sw_args_end_f()

  call grid_setup(g, nx, ny, rank, nranks)
  if (g%nlx < 1 .or. g%nly < 1) call sw_args_fail_f('--nx/--ny too small for this many ranks')

  allocate(eta(0:g%nlx+1, 0:g%nly+1), rhs(0:g%nlx+1, 0:g%nly+1), mask(0:g%nlx+1, 0:g%nly+1))
  allocate(wx(0:g%nlx, 1:g%nly), wy(1:g%nlx, 0:g%nly), diag(1:g%nlx, 1:g%nly))
  allocate(r, z, p, q, mold=eta)
  ! The free-surface coupling grows with resolution, as for a fixed physical
  ! time step on a finer grid: the solve stays a few hundred iterations hard.
  alpha = 2.0_dp * (real(nx, dp) / 96.0_dp)**2
  call build_operator()

  eta = 0.0_dp
  r = 0.0_dp; z = 0.0_dp; p = 0.0_dp; q = 0.0_dp
  total_iters = 0
  worst_iters = 0
  worst_relres = 0.0_dp
  t0 = sw_sync_time_f()
  do step = 1, steps
     call forcing(step)
     call pcg(iters, relres)
     total_iters = total_iters + iters
     worst_iters = max(worst_iters, iters)
     worst_relres = max(worst_relres, relres)
  end do
  ! Independent check of the last solve: the true residual, recomputed.
  call halo_exchange(g, eta)
  call apply_operator(eta, q)
  r = mask * (rhs - q)
  z(1:g%nlx, 1:g%nly) = r(1:g%nlx, 1:g%nly) / diag
  true_relres = sqrt(max(global_dot(r, z), 0.0_dp) / bnorm)
  wall = sw_sync_time_f() - t0

  pass = worst_relres <= tol .and. true_relres <= 10.0_dp * tol .and. worst_iters < maxiter
  write (note, '(6(a,i0),2(a,es9.3))') 'grid=', nx, 'x', ny, &
       ' ranks_grid=', g%px, 'x', g%py, ' steps=', steps, ' iterations=', total_iters, &
       ' max_relres=', worst_relres, ' true_relres=', true_relres
  call sw_note_f(note)
  write (check, '(i0)') total_iters
  status = sw_result_f('ocean', real(total_iters, dp) / wall, 'iterations/s', .true., &
       wall, check, pass)
  call MPI_Finalize()
  if (status /= 0) error stop 1

contains

  ! Face weights alpha * mean depth, zero where either side is land (no flux
  ! through coasts); the operator diagonal follows from them.
  subroutine build_operator()
    integer :: gi, gj
    real(dp) :: depth(0:g%nlx+1, 0:g%nly+1), x, y
    do j = 0, g%nly + 1
       do i = 0, g%nlx + 1
          gi = g%i0 + i
          gj = g%j0 + j
          mask(i, j) = merge(1.0_dp, 0.0_dp, is_ocean(nx, ny, gi, gj))
          x = real(modulo(gi - 1, nx), dp) / nx
          y = real(gj - 1, dp) / ny
          depth(i, j) = 1.0_dp + 0.5_dp * sin(6.0_dp * x) * cos(5.0_dp * y)
       end do
    end do
    do j = 1, g%nly
       do i = 0, g%nlx
          wx(i, j) = alpha * mask(i, j) * mask(i+1, j) * 0.5_dp * (depth(i, j) + depth(i+1, j))
       end do
    end do
    do j = 0, g%nly
       do i = 1, g%nlx
          wy(i, j) = alpha * mask(i, j) * mask(i, j+1) * 0.5_dp * (depth(i, j) + depth(i, j+1))
       end do
    end do
    do j = 1, g%nly
       do i = 1, g%nlx
          diag(i, j) = 1.0_dp + wx(i-1, j) + wx(i, j) + wy(i, j-1) + wy(i, j)
       end do
    end do
  end subroutine build_operator

  subroutine apply_operator(f, af)
    real(dp), intent(in) :: f(0:, 0:)
    real(dp), intent(inout) :: af(0:, 0:)
    do j = 1, g%nly
       do i = 1, g%nlx
          af(i, j) = mask(i, j) * (diag(i, j) * f(i, j) &
               - wx(i-1, j) * f(i-1, j) - wx(i, j) * f(i+1, j) &
               - wy(i, j-1) * f(i, j-1) - wy(i, j) * f(i, j+1))
       end do
    end do
  end subroutine apply_operator

  ! A wind-driven source that moves eastward from step to step.
  subroutine forcing(n)
    integer, intent(in) :: n
    real(dp) :: x, y, pi
    pi = 4.0_dp * atan(1.0_dp)
    rhs = 0.0_dp
    do j = 1, g%nly
       do i = 1, g%nlx
          x = real(g%i0 + i - 1, dp) / nx
          y = real(g%j0 + j - 1, dp) / ny
          rhs(i, j) = mask(i, j) * (eta(i, j) + 0.1_dp * sin(2.0_dp * pi * y) &
               * cos(2.0_dp * pi * x + 0.7_dp * n))
       end do
    end do
  end subroutine forcing

  ! Local sum with Neumaier compensation, so each rank contributes its
  ! correctly rounded partial sum whatever its block shape; the Allreduce
  ! then adds one double per rank. Iteration counts match across rank counts.
  function global_dot(a, b) result(s)
    real(dp), intent(in) :: a(0:, 0:), b(0:, 0:)
    real(dp) :: s, c, t, term
    s = 0.0_dp
    c = 0.0_dp
    do j = 1, g%nly
       do i = 1, g%nlx
          term = a(i, j) * b(i, j)
          t = s + term
          if (abs(s) >= abs(term)) then
             c = c + ((s - t) + term)
          else
             c = c + ((term - t) + s)
          end if
          s = t
       end do
    end do
    s = s + c
    call MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  end function global_dot

  ! Diagonally preconditioned CG from the previous eta. Converged when the
  ! preconditioned residual norm sqrt(r.z) falls below tol * sqrt(b.M^-1 b).
  subroutine pcg(iters, relres)
    integer, intent(out) :: iters
    real(dp), intent(out) :: relres
    real(dp) :: rz, rz_new, pq, a
    call halo_exchange(g, eta)
    call apply_operator(eta, q)
    r = mask * (rhs - q)
    z(1:g%nlx, 1:g%nly) = rhs(1:g%nlx, 1:g%nly) / diag
    bnorm = global_dot(rhs, z)
    z(1:g%nlx, 1:g%nly) = r(1:g%nlx, 1:g%nly) / diag
    rz = global_dot(r, z)
    p = z
    iters = 0
    relres = sqrt(max(rz, 0.0_dp) / bnorm)
    do while (relres > tol .and. iters < maxiter)
       iters = iters + 1
       call halo_exchange(g, p)
       call apply_operator(p, q)
       pq = global_dot(p, q)
       a = rz / pq
       eta = eta + a * p
       r = r - a * q
       z(1:g%nlx, 1:g%nly) = r(1:g%nlx, 1:g%nly) / diag
       rz_new = global_dot(r, z)
       relres = sqrt(max(rz_new, 0.0_dp) / bnorm)
       p = z + (rz_new / rz) * p
       rz = rz_new
    end do
  end subroutine pcg

end program ocean

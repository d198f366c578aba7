! Fortran face of the shared proxy support in swproxy.c: the same flag
! parser, result line and timer, so the Fortran app prints exactly what the
! C apps print. Strings cross the boundary NUL-terminated.
module swproxy_mod
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_long, c_double, c_ptr, &
       c_null_char, c_loc
  implicit none
  private
  public :: sw_args_begin_f, sw_flag_long_f, sw_flag_double_f, sw_args_end_f, &
       sw_args_fail_f, sw_sync_time_f, sw_result_f, sw_note_f

  interface
     subroutine c_args_begin(app, argc, argv) bind(C, name='sw_args_begin')
       import :: c_char, c_int, c_ptr
       character(kind=c_char), intent(in) :: app(*)
       integer(c_int), value :: argc
       type(c_ptr), intent(in) :: argv(*)
     end subroutine c_args_begin
     function c_flag_long(flag, lo, hi, tiny, small, large) result(v) &
          bind(C, name='sw_flag_long')
       import :: c_char, c_long
       character(kind=c_char), intent(in) :: flag(*)
       integer(c_long), value :: lo, hi, tiny, small, large
       integer(c_long) :: v
     end function c_flag_long
     function c_flag_double(flag, lo, hi, tiny, small, large) result(v) &
          bind(C, name='sw_flag_double')
       import :: c_char, c_double
       character(kind=c_char), intent(in) :: flag(*)
       real(c_double), value :: lo, hi, tiny, small, large
       real(c_double) :: v
     end function c_flag_double
     subroutine c_args_end() bind(C, name='sw_args_end')
     end subroutine c_args_end
     subroutine c_args_fail(message) bind(C, name='sw_args_fail')
       import :: c_char
       character(kind=c_char), intent(in) :: message(*)
     end subroutine c_args_fail
     function c_sync_time() result(t) bind(C, name='sw_sync_time')
       import :: c_double
       real(c_double) :: t
     end function c_sync_time
     function c_result(app, fom, unit, hib, wall, check, pass) result(status) &
          bind(C, name='sw_result')
       import :: c_char, c_double, c_int
       character(kind=c_char), intent(in) :: app(*), unit(*), check(*)
       real(c_double), value :: fom, wall
       integer(c_int), value :: hib, pass
       integer(c_int) :: status
     end function c_result
     subroutine c_note(text) bind(C, name='sw_note')
       import :: c_char
       character(kind=c_char), intent(in) :: text(*)
     end subroutine c_note
  end interface

  ! The C parser keeps pointers into argv, so the argument text must live
  ! for the whole run.
  character(kind=c_char, len=:), allocatable, target, save :: arg_text(:)
  type(c_ptr), allocatable, save :: arg_ptrs(:)

contains

  subroutine sw_args_begin_f(app)
    character(len=*), intent(in) :: app
    integer :: i, n, longest, length
    n = command_argument_count()
    longest = 1
    do i = 0, n
       call get_command_argument(i, length=length)
       longest = max(longest, length + 1)
    end do
    allocate(character(kind=c_char, len=longest) :: arg_text(0:n))
    allocate(arg_ptrs(0:n))
    do i = 0, n
       call get_command_argument(i, arg_text(i), length=length)
       arg_text(i)(length+1:length+1) = c_null_char
       arg_ptrs(i) = c_loc(arg_text(i))
    end do
    call c_args_begin(trim(app)//c_null_char, int(n + 1, c_int), arg_ptrs)
  end subroutine sw_args_begin_f

  function sw_flag_long_f(flag, lo, hi, tiny, small, large) result(v)
    character(len=*), intent(in) :: flag
    integer, intent(in) :: lo, hi, tiny, small, large
    integer :: v
    v = int(c_flag_long(flag//c_null_char, int(lo, c_long), int(hi, c_long), &
         int(tiny, c_long), int(small, c_long), int(large, c_long)))
  end function sw_flag_long_f

  function sw_flag_double_f(flag, lo, hi, tiny, small, large) result(v)
    character(len=*), intent(in) :: flag
    real(c_double), intent(in) :: lo, hi, tiny, small, large
    real(c_double) :: v
    v = c_flag_double(flag//c_null_char, lo, hi, tiny, small, large)
  end function sw_flag_double_f

  subroutine sw_args_end_f()
    call c_args_end()
  end subroutine sw_args_end_f

  subroutine sw_args_fail_f(message)
    character(len=*), intent(in) :: message
    call c_args_fail(message//c_null_char)
  end subroutine sw_args_fail_f

  function sw_sync_time_f() result(t)
    real(c_double) :: t
    t = c_sync_time()
  end function sw_sync_time_f

  function sw_result_f(app, fom, unit, hib, wall, check, pass) result(status)
    character(len=*), intent(in) :: app, unit, check
    real(c_double), intent(in) :: fom, wall
    logical, intent(in) :: hib, pass
    integer :: status
    status = int(c_result(app//c_null_char, fom, unit//c_null_char, &
         merge(1_c_int, 0_c_int, hib), wall, trim(check)//c_null_char, &
         merge(1_c_int, 0_c_int, pass)))
  end function sw_result_f

  subroutine sw_note_f(text)
    character(len=*), intent(in) :: text
    call c_note(trim(text)//c_null_char)
  end subroutine sw_note_f

end module swproxy_mod

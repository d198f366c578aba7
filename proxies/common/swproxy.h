/* Shared support for the scalewise proxy applications: flag parsing with
 * size presets, the one-line result record, a synchronised timer and an
 * exact (order-independent) floating-point accumulator.
 *
 * The functions use plain C-interoperable arguments so that the Fortran
 * module (swproxy_mod.f90) can bind to them instead of duplicating them. */
#ifndef SWPROXY_H
#define SWPROXY_H

#include <stdint.h>

/* Strict C11 headers do not define M_PI. */
#define SW_PI 3.14159265358979323846

/* ---- flags --------------------------------------------------------------
 * Call sw_args_begin once (after MPI_Init), then one sw_flag_* per flag, then
 * sw_args_end. Each sw_flag_* returns the preset for the chosen --size
 * unless the flag is given explicitly. The first problem (unknown flag,
 * missing or malformed value, value out of range) is remembered; sw_args_end
 * prints it as one line on rank 0 and exits every rank with status 2. */
void sw_args_begin(const char *app, int argc, char **argv);
long sw_flag_long(const char *flag, long lo, long hi,
                  long tiny, long small, long large);
double sw_flag_double(const char *flag, double lo, double hi,
                      double tiny, double small, double large);
/* A flag's text as given (not a sizing flag: presets do not apply), else `fallback`;
 * `help` describes its value in --help. */
const char *sw_flag_text(const char *flag, const char *fallback, const char *help);
void sw_args_end(void);
/* Report a configuration problem found after parsing (e.g. a grid that
 * cannot be split over this many ranks): one line on rank 0, exit 2. */
void sw_args_fail(const char *message);
/* "tiny", "small", "large" or "custom" (any explicit sizing flag). */
const char *sw_size_label(void);

/* ---- timing and result ------------------------------------------------- */
/* MPI_Barrier then MPI_Wtime: every app calls it exactly twice (start and
 * end of the timed region), so each run adds exactly 2 MPI_Barrier calls. */
double sw_sync_time(void);
/* Prints the SCALEWISE_RESULT line on rank 0 and returns the exit status
 * every rank should use (0 on PASS, 1 on FAIL). `check` is printed as is. */
int sw_result(const char *app, double fom, const char *fom_unit,
              int higher_is_better, double wall, const char *check, int pass);
/* Rank 0 prints "# <app>: <text>" for human readers; not machine-parsed. */
void sw_note(const char *text);
/* Spin on MPI_Wtime for `seconds` (0 or less: return at once), as an application computing:
 * a sleeping CPU wakes slowly (a 10 ms sleep made the next 8-byte round trip here 50 times
 * slower).  The calibration proxies rest so that a shaped link's token bucket refills. */
void sw_rest_busy(double seconds);

/* ---- exact summation ---------------------------------------------------
 * A fixed-point "super-accumulator": every double in [2^-768, 2^512) is
 * added exactly into 32-bit digits held in int64 limbs, so the total does
 * not depend on the order of the additions or on how the terms are split
 * over ranks. Merge accumulators across ranks with MPI_INT64_T / MPI_SUM
 * after sw_xsum_normalise (digits then stay below 2^32, so up to 2^30 ranks
 * can be summed without overflow). */
#define SW_XSUM_LIMBS 40
typedef struct {
    int64_t limb[SW_XSUM_LIMBS];
    int64_t nonfinite; /* count of NaN/Inf/out-of-range terms */
    int64_t pending;   /* additions since the last carry normalisation */
} sw_xsum;

void sw_xsum_clear(sw_xsum *s);
void sw_xsum_add(sw_xsum *s, double x);
void sw_xsum_normalise(sw_xsum *s);
/* The accumulated value rounded to a double; deterministic given the limbs. */
double sw_xsum_value(const sw_xsum *s);
/* Sums `n` accumulators element-wise over MPI_COMM_WORLD in one
 * MPI_Allreduce of n*SW_XSUM_WORDS int64 values (336 bytes each). */
#define SW_XSUM_WORDS (SW_XSUM_LIMBS + 2)
void sw_xsum_allreduce(sw_xsum *s, int n);

/* Relative difference |a-b| / max(|a|,|b|, tiny). */
double sw_rel_diff(double a, double b);

#endif

/* Shared support for the scalewise proxy applications (see swproxy.h). */
#include "swproxy.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ flags */

#define MAX_FLAGS 32
#define MSG_LEN 512

static const char *size_names[3] = {"tiny", "small", "large"};

static struct {
    char app[64];
    int argc;
    char **argv;
    unsigned char claimed[256]; /* argv tokens consumed by a known flag */
    int size;                   /* preset index into size_names */
    int explicit_sizing;        /* any sizing flag given on the command line */
    int help;
    char error[MSG_LEN];        /* first problem found, empty if none */
    int nflags;
    char usage[MAX_FLAGS][160];
    char names[MAX_FLAGS][40]; /* copied: Fortran passes temporaries */
} args;

static int world_rank(void)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static void set_error(const char *fmt, const char *a, const char *b)
{
    if (args.error[0] == '\0')
        snprintf(args.error, sizeof args.error, fmt, a, b);
}

/* Finds `flag` as "--flag value" or "--flag=value"; returns its value text,
 * NULL if absent. Marks the tokens as claimed. */
static const char *find_flag(const char *flag)
{
    size_t len = strlen(flag);
    const char *found = NULL;
    for (int i = 1; i < args.argc; i++) {
        const char *tok = args.argv[i];
        const char *value = NULL;
        if (strcmp(tok, flag) == 0) {
            args.claimed[i] = 1;
            if (i + 1 >= args.argc) {
                set_error("missing value for %s%s", flag, "");
                return NULL;
            }
            args.claimed[i + 1] = 1;
            value = args.argv[++i];
        } else if (strncmp(tok, flag, len) == 0 && tok[len] == '=') {
            args.claimed[i] = 1;
            value = tok + len + 1;
        } else {
            continue;
        }
        if (found) {
            set_error("%s given more than once%s", flag, "");
            return NULL;
        }
        found = value;
    }
    return found;
}

void sw_args_begin(const char *app, int argc, char **argv)
{
    memset(&args, 0, sizeof args);
    /* Copied: the Fortran caller passes a temporary string. */
    snprintf(args.app, sizeof args.app, "%s", app);
    args.argc = argc < 256 ? argc : 256;
    args.argv = argv;
    if (argc > 256)
        set_error("too many arguments%s%s", "", "");
    for (int i = 1; i < args.argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            args.help = 1;
            args.claimed[i] = 1;
        }
    }
    const char *size = find_flag("--size");
    snprintf(args.names[args.nflags], sizeof args.names[0], "--size");
    snprintf(args.usage[args.nflags++], sizeof args.usage[0],
             "  --size tiny|small|large   preset problem size (default tiny)");
    if (!size)
        return;
    for (int s = 0; s < 3; s++)
        if (strcmp(size, size_names[s]) == 0) {
            args.size = s;
            return;
        }
    set_error("bad value '%s' for --size: expected tiny, small or large%s", size, "");
}

static void register_flag(const char *flag, const char *line)
{
    if (args.nflags < MAX_FLAGS) {
        snprintf(args.names[args.nflags], sizeof args.names[0], "%s", flag);
        snprintf(args.usage[args.nflags++], sizeof args.usage[0], "%s", line);
    }
}

long sw_flag_long(const char *flag, long lo, long hi,
                  long tiny, long small, long large)
{
    char line[160];
    snprintf(line, sizeof line, "  %-12s integer in [%ld, %ld]; presets %ld / %ld / %ld",
             flag, lo, hi, tiny, small, large);
    register_flag(flag, line);
    long preset[3] = {tiny, small, large};
    const char *text = find_flag(flag);
    if (!text)
        return preset[args.size];
    args.explicit_sizing = 1;
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') {
        set_error("bad value '%s' for %s: expected an integer", text, flag);
        return preset[args.size];
    }
    if (v < lo || v > hi) {
        char range[96];
        snprintf(range, sizeof range, "%s: must be in [%ld, %ld]", flag, lo, hi);
        set_error("bad value '%s' for %s", text, range);
        return preset[args.size];
    }
    return v;
}

double sw_flag_double(const char *flag, double lo, double hi,
                      double tiny, double small, double large)
{
    char line[160];
    snprintf(line, sizeof line, "  %-12s number in [%g, %g]; presets %g / %g / %g",
             flag, lo, hi, tiny, small, large);
    register_flag(flag, line);
    double preset[3] = {tiny, small, large};
    const char *text = find_flag(flag);
    if (!text)
        return preset[args.size];
    args.explicit_sizing = 1;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v)) {
        set_error("bad value '%s' for %s: expected a number", text, flag);
        return preset[args.size];
    }
    if (v < lo || v > hi) {
        char range[96];
        snprintf(range, sizeof range, "%s: must be in [%g, %g]", flag, lo, hi);
        set_error("bad value '%s' for %s", text, range);
        return preset[args.size];
    }
    return v;
}

const char *sw_flag_text(const char *flag, const char *fallback, const char *help)
{
    char line[160];
    snprintf(line, sizeof line, "  %-12s %s (default %s)", flag, help, fallback);
    register_flag(flag, line);
    const char *text = find_flag(flag);
    return text ? text : fallback;
}

static void exit_all(int status)
{
    fflush(stdout);
    fflush(stderr);
    MPI_Finalize();
    exit(status);
}

void sw_args_end(void)
{
    for (int i = 1; i < args.argc && args.error[0] == '\0'; i++) {
        if (args.claimed[i])
            continue;
        char known[MSG_LEN / 2] = "";
        for (int f = 0; f < args.nflags; f++) {
            strncat(known, " ", sizeof known - strlen(known) - 1);
            strncat(known, args.names[f], sizeof known - strlen(known) - 1);
        }
        set_error(args.argv[i][0] == '-' ? "unknown flag '%s' (known:%s)"
                                         : "unexpected argument '%s' (known flags:%s)",
                  args.argv[i], known);
    }
    if (args.error[0] != '\0')
        sw_args_fail(args.error);
    if (args.help) {
        if (world_rank() == 0) {
            printf("usage: %s [flags]\n", args.app);
            for (int f = 0; f < args.nflags; f++)
                printf("%s\n", args.usage[f]);
        }
        exit_all(0);
    }
}

void sw_args_fail(const char *message)
{
    if (world_rank() == 0)
        fprintf(stderr, "%s: error: %s\n", args.app, message);
    exit_all(2);
}

const char *sw_size_label(void)
{
    return args.explicit_sizing ? "custom" : size_names[args.size];
}

/* ----------------------------------------------------------------- result */

void sw_rest_busy(double seconds)
{
    for (double until = MPI_Wtime() + seconds; seconds > 0 && MPI_Wtime() < until;)
        ;
}

double sw_sync_time(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime();
}

int sw_result(const char *app, double fom, const char *fom_unit,
              int higher_is_better, double wall, const char *check, int pass)
{
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (world_rank() == 0) {
        printf("SCALEWISE_RESULT app=%s ranks=%d size=%s fom=%.6g fom_unit=%s "
               "higher_is_better=%d wall=%.6f check=%s status=%s\n",
               app, ranks, sw_size_label(), fom, fom_unit, higher_is_better ? 1 : 0,
               wall, check, pass ? "PASS" : "FAIL");
        fflush(stdout);
    }
    return pass ? 0 : 1;
}

void sw_note(const char *text)
{
    if (world_rank() == 0) {
        printf("# %s: %s\n", args.app[0] ? args.app : "proxy", text);
        fflush(stdout);
    }
}

/* ---------------------------------------------------------- exact summing */

#define XSUM_BIAS 768               /* limb 0 holds weight 2^-768 */
#define DIGIT ((int64_t)1 << 32)
#define NORMALISE_EVERY (1 << 28)   /* each add puts < 2^33 in a limb */

void sw_xsum_clear(sw_xsum *s)
{
    memset(s, 0, sizeof *s);
}

void sw_xsum_normalise(sw_xsum *s)
{
    for (int i = 0; i < SW_XSUM_LIMBS - 1; i++) {
        int64_t digit = s->limb[i] % DIGIT;
        if (digit < 0)
            digit += DIGIT;
        s->limb[i + 1] += (s->limb[i] - digit) / DIGIT;
        s->limb[i] = digit;
    }
    s->pending = 0;
}

void sw_xsum_add(sw_xsum *s, double x)
{
    if (x == 0.0)
        return;
    if (!isfinite(x)) {
        s->nonfinite++;
        return;
    }
    int e;
    double m = frexp(fabs(x), &e);          /* |x| = m 2^e, m in [0.5, 1) */
    uint64_t mant = (uint64_t)ldexp(m, 53);   /* exact 53-bit integer */
    int p = e - 53 + XSUM_BIAS;               /* bit position of mant's LSB */
    if (p < 0) {
        /* Below 2^-768: dropped the same way whatever the decomposition. */
        if (p <= -53)
            return;
        mant >>= -p;
        p = 0;
    }
    int k = p / 32, off = p % 32;
    if (k + 2 >= SW_XSUM_LIMBS) {
        s->nonfinite++; /* beyond the accumulator's range */
        return;
    }
    uint64_t a = (mant & 0xffffffffu) << off; /* < 2^64 */
    uint64_t b = (mant >> 32) << off;         /* < 2^53 */
    int64_t d0 = (int64_t)(a & 0xffffffffu);
    int64_t d1 = (int64_t)(a >> 32) + (int64_t)(b & 0xffffffffu);
    int64_t d2 = (int64_t)(b >> 32);
    if (x < 0) {
        d0 = -d0;
        d1 = -d1;
        d2 = -d2;
    }
    s->limb[k] += d0;
    s->limb[k + 1] += d1;
    s->limb[k + 2] += d2;
    if (++s->pending >= NORMALISE_EVERY)
        sw_xsum_normalise(s);
}

double sw_xsum_value(const sw_xsum *s)
{
    if (s->nonfinite)
        return NAN;
    sw_xsum t = *s;
    sw_xsum_normalise(&t);
    double sign = 1.0;
    if (t.limb[SW_XSUM_LIMBS - 1] < 0) {
        /* Work on the magnitude so every digit is non-negative and the
         * top-down conversion below rounds well. */
        sign = -1.0;
        for (int i = 0; i < SW_XSUM_LIMBS; i++)
            t.limb[i] = -t.limb[i];
        sw_xsum_normalise(&t);
    }
    double v = 0.0;
    for (int i = SW_XSUM_LIMBS - 1; i >= 0; i--)
        v += ldexp((double)t.limb[i], 32 * i - XSUM_BIAS);
    return sign * v;
}

void sw_xsum_allreduce(sw_xsum *s, int n)
{
    for (int i = 0; i < n; i++)
        sw_xsum_normalise(&s[i]);
    _Static_assert(sizeof(sw_xsum) == SW_XSUM_WORDS * sizeof(int64_t),
                   "sw_xsum must be a plain int64 array for MPI_INT64_T");
    MPI_Allreduce(MPI_IN_PLACE, s, n * SW_XSUM_WORDS, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}

double sw_rel_diff(double a, double b)
{
    double scale = fmax(fmax(fabs(a), fabs(b)), 1e-300);
    return fabs(a - b) / scale;
}

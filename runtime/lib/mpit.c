/* MPI_T: the library's own performance variables (pvars), read once at
 * MPI_Finalize, and the control variables (cvars) in force, read once on
 * rank 0, as the settings the run had (docs/mpit.md).
 *
 * Every MPI_T function is called through PMPI_T_* (sw_pmpi, base.h): the
 * application's own MPI_T calls are untouched and ours are never counted as
 * its MPI calls.  A missing symbol or a failing
 * MPI_T_init_thread leaves the section empty with its status saying why;
 * nothing here changes how the application's MPI behaves. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#ifdef OPEN_MPI
/* The types MPI_T variables come in (weak, as in base.h: the library also
 * loads into processes without MPI). */
#pragma weak ompi_mpi_unsigned
#pragma weak ompi_mpi_unsigned_long
#pragma weak ompi_mpi_unsigned_long_long
#pragma weak ompi_mpi_count
#pragma weak ompi_mpi_double
#pragma weak ompi_mpi_char
#pragma weak ompi_mpi_long
#endif
#include "base.h"
#include "module.h"

#define SW_MPIT_MAX_STRING 8192 /* the largest string cvar buffer read */

/* One pvar being read: its handle, and its values once read. */
typedef struct {
    char name[SW_MPIT_MAX_NAME + 1];
    char desc[SW_MPIT_MAX_DESC + 1];
    MPI_T_pvar_handle handle;
    MPI_Datatype type;
    int count, mpi_class, bind;
    uint8_t cls, kind;
    uint64_t *values; /* count values, as u64 or as the bits of a double */
} sw_pvar;

static struct {
    int status, flags;
    MPI_T_pvar_session session;
    sw_pvar *pvars;
    int npvars;
    MPI_Comm world; /* the application's MPI_COMM_WORLD, the one object pvars are bound to */
} mpit = {.status = SW_MPIT_OFF};

/* The standard's order of classes, whatever numbers the library's mpi.h gives them. */
static int class_code(int c)
{
    static const int classes[] = {MPI_T_PVAR_CLASS_STATE,         MPI_T_PVAR_CLASS_LEVEL,
                                  MPI_T_PVAR_CLASS_SIZE,          MPI_T_PVAR_CLASS_PERCENTAGE,
                                  MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_PVAR_CLASS_LOWWATERMARK,
                                  MPI_T_PVAR_CLASS_COUNTER,       MPI_T_PVAR_CLASS_AGGREGATE,
                                  MPI_T_PVAR_CLASS_TIMER,         MPI_T_PVAR_CLASS_GENERIC};
    for (int i = 0; i < (int)(sizeof classes / sizeof *classes); i++)
        if (classes[i] == c)
            return i;
    return -1;
}

/* Numeric classes whose value means something at finalize (not STATE, PERCENTAGE, GENERIC). */
static int wanted_class(int code)
{
    return code == SW_PVAR_LEVEL || code == SW_PVAR_SIZE || code == SW_PVAR_HIGHWATERMARK ||
           code == SW_PVAR_LOWWATERMARK || code == SW_PVAR_COUNTER || code == SW_PVAR_AGGREGATE ||
           code == SW_PVAR_TIMER;
}

/* 0: unsigned integer kept as u64; 1: double; -1: a type we do not read. */
static int value_kind(MPI_Datatype t)
{
    if (t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG || t == MPI_COUNT || t == MPI_INT)
        return SW_MPIT_U64;
    return t == MPI_DOUBLE ? SW_MPIT_F64 : -1;
}

/* Variables a library registers but crashes on when asked for a handle
 * while their component is not the one in use: Open MPI 4.1's psm2 MTL
 * dereferences its unopened message queue in MPI_T_pvar_handle_alloc
 * (docs/mpit.md). */
static int known_unsafe(const char *name)
{
    static const char *prefixes[] = {"mtl_psm2_"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* Open MPI loads its components as mca_<framework>_<component>.so and
 * unloads those it does not select, but their pvars stay registered with
 * callbacks into the unmapped object: allocating a handle jumps there.
 * A variable named <framework>_<component>_... whose component object is
 * installed beside the loaded ones but not loaded itself is skipped. */
static char component_dir[4096];

static int find_component_dir(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (!base || strncmp(base + 1, "mca_", 4) != 0 || (size_t)(base - info->dlpi_name) >= sizeof component_dir)
        return 0;
    memcpy(component_dir, info->dlpi_name, (size_t)(base - info->dlpi_name));
    component_dir[base - info->dlpi_name] = 0;
    return 1;
}

static int component_unloaded(const char *name)
{
    const char *a = strchr(name, '_'), *b = a ? strchr(a + 1, '_') : NULL;
    char path[4096 + SW_MPIT_MAX_NAME + 16];
    if (!component_dir[0] || !b)
        return 0;
    snprintf(path, sizeof path, "%s/mca_%.*s.so", component_dir, (int)(b - name), name);
    if (access(path, F_OK) != 0)
        return 0;
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (h)
        dlclose(h); /* drops only the reference RTLD_NOLOAD just took */
    return h == NULL;
}

static int seen(const char *name)
{
    for (int i = 0; i < mpit.npvars; i++)
        if (strcmp(mpit.pvars[i].name, name) == 0)
            return 1;
    return 0;
}

/* Handles for every numeric pvar bound to no object or to a communicator
 * (then MPI_COMM_WORLD), the first of each name, up to the cap. */
static void open_pvars(void)
{
    int n = 0;
    if (sw_pmpi.T_pvar_get_num(&n) != MPI_SUCCESS || n <= 0 ||
        sw_pmpi.T_pvar_session_create(&mpit.session) != MPI_SUCCESS)
        return;
    dl_iterate_phdr(find_component_dir, NULL);
    /* One slot past the cap: each candidate is described in the next free
     * slot, which is the spare one once the cap is reached. */
    mpit.pvars = calloc((size_t)sw_job.cfg.max_pvars + 1, sizeof *mpit.pvars);
    for (int i = 0; mpit.pvars && i < n; i++) {
        sw_pvar *p = &mpit.pvars[mpit.npvars];
        int nl = sizeof p->name, dl = sizeof p->desc, verbosity, ro, cont, atomic;
        MPI_T_enum e;
        if (sw_pmpi.T_pvar_get_info(i, p->name, &nl, &verbosity, &p->mpi_class, &p->type, &e, p->desc, &dl, &p->bind,
                                    &ro, &cont, &atomic) != MPI_SUCCESS)
            continue;
        int code = class_code(p->mpi_class), kind = value_kind(p->type);
        int bound = p->bind == MPI_T_BIND_MPI_COMM;
        if (!wanted_class(code) || kind < 0 || (p->bind != MPI_T_BIND_NO_OBJECT && !bound) || seen(p->name) ||
            known_unsafe(p->name) || component_unloaded(p->name))
            continue;
        if (mpit.npvars == (int)sw_job.cfg.max_pvars) {
            mpit.flags |= SW_MPIT_PVARS_CAPPED;
            break;
        }
        void *object = bound ? (void *)&mpit.world : NULL;
        if (sw_pmpi.T_pvar_handle_alloc(mpit.session, i, object, &p->handle, &p->count) != MPI_SUCCESS)
            continue;
        if (p->count <= 0 || p->count > SW_MPIT_MAX_VALUES) {
            sw_pmpi.T_pvar_handle_free(mpit.session, &p->handle);
            mpit.flags |= SW_MPIT_PVARS_CAPPED;
            continue;
        }
        p->cls = (uint8_t)code;
        p->kind = (uint8_t)kind;
        p->bind = bound ? SW_MPIT_BIND_WORLD : SW_MPIT_BIND_NONE;
        if (!cont)
            sw_pmpi.T_pvar_start(mpit.session, p->handle);
        mpit.npvars++;
    }
}

/* Open MPI's MPI_T_init_thread registers the variables of every installed
 * component of every framework not open after MPI_Init, ignoring the
 * component lists in force, and loads each to do so.  With Debian's Open
 * MPI 4.1 that reloads the MTL components: the cm PML loads psm and psm2
 * (ofi is excluded by the site's `mtl = ^ofi`) to choose at MPI_Init and
 * unloads them when ob1 wins; MPI_T then loads ofi, psm2 and psm again,
 * and the constructors of libpsm2 and libpsm_infinipath spend 100 ms each
 * once more: 0.2 s per rank, in the job's wall time.  So when the MTL
 * framework is not registered after MPI_Init, it is registered here first
 * with component loading switched off for that one call: the framework's
 * own variables are registered, its components' are not (none of them is
 * in force: no MTL was selected), and the log's meta says so (an optional key,
 * which readers that do not know it skip).
 * SCALEWISE_MPIT=all keeps the library's full registration (docs/mpit.md). */
#ifdef OPEN_MPI
static void register_mtl_unloaded(void)
{
    _Bool (*is_registered)(void *) = (_Bool(*)(void *))dlsym(RTLD_DEFAULT, "mca_base_framework_is_registered");
    int (*do_register)(void *, int) = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "mca_base_framework_register");
    _Bool *no_dlopen = dlsym(RTLD_DEFAULT, "mca_base_component_disable_dlopen");
    void *mtl = dlsym(RTLD_DEFAULT, "ompi_mtl_base_framework");
    if (!is_registered || !do_register || !no_dlopen || !mtl || is_registered(mtl))
        return;
    _Bool was = *no_dlopen;
    *no_dlopen = 1;
    int rc = do_register(mtl, 0); /* MCA_BASE_REGISTER_DEFAULT */
    *no_dlopen = was;
    if (rc == 0) /* OPAL_SUCCESS */
        sw_job.mpit_mtl_unloaded = 1;
}
#endif

/* After PMPI_Init: MPI_T_init_thread, handles for the pvars we read, started. */
static void start_mpit(void)
{
    if (!sw_job.cfg.mpit)
        return;
    int provided;
    mpit.status = SW_MPIT_UNAVAILABLE;
    mpit.world = MPI_COMM_WORLD;
    mpit.session = MPI_T_PVAR_SESSION_NULL;
    if (!sw_pmpi.has_mpit)
        return;
#ifdef OPEN_MPI
    if (sw_job.cfg.mpit != SW_MPIT_ALL)
        register_mtl_unloaded();
#endif
    if (sw_pmpi.T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return;
    mpit.status = SW_MPIT_READ;
    open_pvars();
}

/* Read every open pvar now: at MPI_Finalize entry, before the log's own
 * traffic.  A phase boundary could call this too and keep each reading
 * (not done: the values are read once). */
static void read_pvars(void)
{
    for (int i = 0; mpit.status == SW_MPIT_READ && i < mpit.npvars; i++) {
        sw_pvar *p = &mpit.pvars[i];
        union {
            unsigned u[SW_MPIT_MAX_VALUES];
            unsigned long ul[SW_MPIT_MAX_VALUES];
            unsigned long long ull[SW_MPIT_MAX_VALUES];
            MPI_Count c[SW_MPIT_MAX_VALUES];
            int d[SW_MPIT_MAX_VALUES];
            double f[SW_MPIT_MAX_VALUES];
        } buf;
        if (!p->values)
            p->values = calloc((size_t)p->count, sizeof(uint64_t));
        if (!p->values || sw_pmpi.T_pvar_read(mpit.session, p->handle, &buf) != MPI_SUCCESS)
            continue;
        for (int k = 0; k < p->count; k++) {
            if (p->kind == SW_MPIT_F64)
                memcpy(&p->values[k], &buf.f[k], sizeof(double));
            else if (p->type == MPI_UNSIGNED)
                p->values[k] = buf.u[k];
            else if (p->type == MPI_UNSIGNED_LONG)
                p->values[k] = buf.ul[k];
            else if (p->type == MPI_COUNT)
                p->values[k] = buf.c[k] < 0 ? 0 : (uint64_t)buf.c[k];
            else if (p->type == MPI_INT)
                p->values[k] = buf.d[k] < 0 ? 0 : (uint64_t)buf.d[k];
            else
                p->values[k] = buf.ull[k];
        }
    }
}

static void put_text(sw_buf *b, const char *s, size_t cap)
{
    size_t n = strlen(s);
    n = n < cap ? n : cap;
    put16(b, (uint16_t)n);
    put(b, s, n);
}

/* An enumerated cvar's value as the library names it ("auto", not 0). */
static void enum_name(MPI_T_enum e, int value, char *out, size_t cap)
{
    int n = 0, len;
    char name[SW_MPIT_MAX_NAME + 1];
    if (e == MPI_T_ENUM_NULL || sw_pmpi.T_enum_get_info(e, &n, name, &(int){sizeof name}) != MPI_SUCCESS)
        return;
    for (int k = 0; k < n; k++) {
        int v;
        len = sizeof name;
        if (sw_pmpi.T_enum_get_item(e, k, &v, name, &len) == MPI_SUCCESS && v == value) {
            snprintf(out, cap, "%s", name);
            return;
        }
    }
}

/* One cvar's value in force as text; 0 when its type or size is not read. */
static int cvar_text(int i, char *name, char *value, size_t cap)
{
    char desc[SW_MPIT_MAX_DESC + 1];
    int nl = SW_MPIT_MAX_NAME + 1, dl = sizeof desc, verbosity, bind, scope, count;
    MPI_Datatype t;
    MPI_T_enum e;
    MPI_T_cvar_handle h;
    if (sw_pmpi.T_cvar_get_info(i, name, &nl, &verbosity, &t, &e, desc, &dl, &bind, &scope) != MPI_SUCCESS ||
        bind != MPI_T_BIND_NO_OBJECT || (value_kind(t) < 0 && t != MPI_CHAR && t != MPI_LONG && t != MPI_LONG_LONG))
        return 0;
    if (sw_pmpi.T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS)
        return 0;
    int ok = 0;
    union {
        int d;
        unsigned u;
        long l;
        unsigned long ul;
        long long ll;
        unsigned long long ull;
        MPI_Count c;
        double f;
        char s[SW_MPIT_MAX_STRING + 1];
    } v;
    memset(&v, 0, sizeof v);
    /* Strings come in buffers of the library's size (Open MPI: 2048), cut to SW_MPIT_MAX_VALUE when written. */
    if ((t == MPI_CHAR ? count <= SW_MPIT_MAX_STRING : count == 1) && sw_pmpi.T_cvar_read(h, &v) == MPI_SUCCESS) {
        ok = 1;
        if (t == MPI_CHAR)
            snprintf(value, cap, "%.*s", SW_MPIT_MAX_VALUE, v.s);
        else if (t == MPI_INT) {
            snprintf(value, cap, "%d", v.d);
            enum_name(e, v.d, value, cap);
        } else if (t == MPI_UNSIGNED)
            snprintf(value, cap, "%u", v.u);
        else if (t == MPI_LONG)
            snprintf(value, cap, "%ld", v.l);
        else if (t == MPI_UNSIGNED_LONG)
            snprintf(value, cap, "%lu", v.ul);
        else if (t == MPI_LONG_LONG)
            snprintf(value, cap, "%lld", v.ll);
        else if (t == MPI_COUNT)
            snprintf(value, cap, "%lld", (long long)v.c);
        else if (t == MPI_DOUBLE)
            snprintf(value, cap, "%.17g", v.f);
        else
            snprintf(value, cap, "%llu", v.ull);
    }
    sw_pmpi.T_cvar_handle_free(&h);
    return ok;
}

/* Rank 0's part: status, flags, the cvars in force, the pvar descriptions. */
static void pack_head(sw_buf *b)
{
    sw_buf cvars = {0};
    uint32_t ncvars = 0;
    int n = 0;
    if (mpit.status == SW_MPIT_READ && sw_pmpi.T_cvar_get_num(&n) == MPI_SUCCESS)
        for (int i = 0; i < n; i++) {
            char name[SW_MPIT_MAX_NAME + 1], value[SW_MPIT_MAX_VALUE + 1];
            if (!cvar_text(i, name, value, sizeof value))
                continue;
            if (ncvars == sw_job.cfg.max_cvars) {
                mpit.flags |= SW_MPIT_CVARS_CAPPED;
                break;
            }
            put_text(&cvars, name, SW_MPIT_MAX_NAME);
            put_text(&cvars, value, SW_MPIT_MAX_VALUE);
            ncvars++;
        }
    put32(b, (uint32_t)mpit.status);
    put32(b, (uint32_t)mpit.flags);
    put32(b, ncvars);
    put(b, cvars.p, cvars.n);
    free(cvars.p);
    put32(b, (uint32_t)mpit.npvars);
    for (int i = 0; i < mpit.npvars; i++) {
        put_text(b, mpit.pvars[i].name, SW_MPIT_MAX_NAME);
        put_text(b, mpit.pvars[i].desc, SW_MPIT_MAX_DESC);
    }
}

/* This rank's record: the values read by read_pvars. */
static void pack_rank(sw_buf *b, unsigned log_flags)
{
    (void)log_flags;
    uint32_t n = 0;
    for (int i = 0; i < mpit.npvars; i++)
        n += mpit.pvars[i].values != NULL;
    put32(b, (uint32_t)sw_job.rank);
    put32(b, (uint32_t)mpit.flags & SW_MPIT_PVARS_CAPPED);
    put32(b, n);
    for (int i = 0; i < mpit.npvars; i++) {
        sw_pvar *p = &mpit.pvars[i];
        if (!p->values)
            continue;
        put_text(b, p->name, SW_MPIT_MAX_NAME);
        put8(b, p->cls);
        put8(b, p->kind);
        put8(b, (uint8_t)p->bind);
        put8(b, 0);
        put32(b, (uint32_t)p->count);
        for (int k = 0; k < p->count; k++)
            put64(b, p->values[k]);
    }
}

/* Handles, session and MPI_T released (before PMPI_Finalize). */
static void finish_mpit(void)
{
    if (mpit.status != SW_MPIT_READ)
        return;
    for (int i = 0; i < mpit.npvars; i++) {
        sw_pmpi.T_pvar_handle_free(mpit.session, &mpit.pvars[i].handle);
        free(mpit.pvars[i].values);
    }
    free(mpit.pvars);
    mpit.pvars = NULL;
    mpit.npvars = 0;
    if (mpit.session != MPI_T_PVAR_SESSION_NULL)
        sw_pmpi.T_pvar_session_free(&mpit.session);
    sw_pmpi.T_finalize();
    mpit.status = SW_MPIT_OFF;
}

SW_MODULE(mpit_module) = {
    .name = "mpit",
    .init = start_mpit,
    .stop = read_pvars,
    .section = SW_SEC_MPIT,
    .pack_rank = pack_rank,
    .pack_head = pack_head,
    .finish = finish_mpit,
};

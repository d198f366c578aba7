/* Call sites, the slow path: first call from an address, collisions, growth;
 * and the log section: the merge over threads and each address as (object,
 * offset).  The per-call path is sites.h. */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <unwind.h>

#include "module.h"
#include "sites.h"

int sw_sites_on = 1;
uintptr_t sw_fortran_lo, sw_fortran_span;

/* The MPI libraries' Fortran bindings: Open MPI's mpif.h library (which
 * `use mpi` calls too) and its `use mpi_f08` library, MPICH's one library.
 * Their calls into C return into them, so depth 1 would name the binding,
 * not the user's line; sw_site_user looks past them. */
static const char *const fortran_libraries[] = {"libmpi_mpifh", "libmpi_usempif08", "libmpi_usempi_ignore_tkr",
                                                "libmpichfort"};
#define SW_MAX_FORTRAN_RANGES 16
static struct {
    uintptr_t lo, hi;
    int binding; /* 0: this library, whose Fortran entry points (genwrap.py) may sit between */
} fortran_ranges[SW_MAX_FORTRAN_RANGES];
static int nfortran_ranges;

static int in_binding(uintptr_t a)
{
    for (int i = 0; i < nfortran_ranges; i++)
        if (fortran_ranges[i].binding && a >= fortran_ranges[i].lo && a < fortran_ranges[i].hi)
            return 1;
    return 0;
}

/* Code the walk looks past: the bindings and this library. */
static int in_fortran(uintptr_t a)
{
    for (int i = 0; i < nfortran_ranges; i++)
        if (a >= fortran_ranges[i].lo && a < fortran_ranges[i].hi)
            return 1;
    return 0;
}

static int add_fortran_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    int binding = 0, self = 0;
    for (size_t i = 0; i < sizeof fortran_libraries / sizeof *fortran_libraries; i++)
        binding |= info->dlpi_name && strstr(info->dlpi_name, fortran_libraries[i]) != NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, me = (uintptr_t)data;
        self |= ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz;
    }
    for (int i = 0; (binding || self) && i < info->dlpi_phnum && nfortran_ranges < SW_MAX_FORTRAN_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
            fortran_ranges[nfortran_ranges].lo = lo;
            fortran_ranges[nfortran_ranges].hi = lo + ph->p_memsz;
            fortran_ranges[nfortran_ranges++].binding = binding;
        }
    }
    return 0;
}

/* At MPI_Init: where the bindings' code lies (one span for the per-call test). */
static void find_fortran_bindings(void)
{
    nfortran_ranges = 0;
    dl_iterate_phdr(add_fortran_object, (void *)(uintptr_t)&find_fortran_bindings);
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < nfortran_ranges; i++) {
        if (!fortran_ranges[i].binding)
            continue;
        lo = fortran_ranges[i].lo < lo ? fortran_ranges[i].lo : lo;
        hi = fortran_ranges[i].hi > hi ? fortran_ranges[i].hi : hi;
    }
    sw_fortran_lo = hi ? lo : 0;
    sw_fortran_span = hi ? hi - lo : 0;
}

/* The walk up the stack: from the frame that ra returns into (the binding),
 * past every binding frame, to the first frame outside them (the user's).
 * libgcc's context of a frame holds, as its CFA, the stack address just
 * above the return address into that frame: the user's return address is
 * the word below it (x86-64). */
typedef struct {
    uintptr_t ra, slot;
    int in_binding;
} fortran_walk;

static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *ctx, void *data)
{
    fortran_walk *w = data;
    uintptr_t ip = (uintptr_t)_Unwind_GetIP(ctx);
    if (!w->in_binding) {
        w->in_binding = ip == w->ra;
        return _URC_NO_REASON;
    }
    if (in_fortran(ip))
        return _URC_NO_REASON;
    uintptr_t slot = (uintptr_t)_Unwind_GetCFA(ctx) - sizeof(uintptr_t);
    w->slot = *(uintptr_t *)slot == ip ? slot : 0;
    return _URC_END_OF_STACK;
}

/* A binding's frames are of fixed size for a given return address (no
 * alloca in them), so the user's return address lies at a fixed offset
 * from this function's frame: learnt with one unwind per address, then one
 * read per call, checked to point outside the bindings (else relearnt).
 * Noinline: the offset is from this frame, one call below the wrapper. */
__attribute__((noinline)) uintptr_t sw_site_user(sw_thread *thread, uintptr_t ra)
{
    char *frame = __builtin_frame_address(0);
    if (!in_binding(ra)) /* within the span, in another object */
        return ra;
    unsigned i = sw_site_hash(ra) & (SW_FORTRAN_SITES - 1);
    if (thread->fortran_ra[i] == ra) {
        uintptr_t user = *(uintptr_t *)(frame + thread->fortran_off[i]);
        if (user && !in_fortran(user))
            return user;
    }
    fortran_walk w = {.ra = ra};
    _Unwind_Backtrace(walk_frame, &w);
    if (!w.slot)
        return ra; /* no frame outside the bindings: keep the binding's address */
    thread->fortran_ra[i] = ra;
    thread->fortran_off[i] = (intptr_t)(w.slot - (uintptr_t)frame);
    return *(uintptr_t *)w.slot;
}

/* Calls from new addresses once a thread holds max_sites sites are kept under
 * this address, one entry per function ("other call sites" in reports). */
#define SW_OTHER_SITES ((uintptr_t)1)

static unsigned site_hash(uintptr_t ra) { return sw_site_hash(ra); }

static sw_site *probe(sw_table *table, uintptr_t ra, uint32_t fn)
{
    for (uint32_t i = sw_site_hash(ra) & table->mask;; i = (i + 1) & table->mask) {
        sw_site *s = (sw_site *)table->slots + i;
        if (!s->ra || (s->ra == ra && s->fn == fn))
            return s;
    }
}

/* Twice the room: sized for max_sites real sites plus one overflow entry per
 * function, at most half full, so probing always ends. */
static int grow(sw_table *table) { return sw_table_grow(table, sizeof(sw_site), site_hash, 256, 0); }

void sw_site_slow(sw_thread *thread, int fn, uintptr_t ra, uint64_t dt)
{
    sw_table *table = &thread->sites;
    uint64_t nbytes = thread->call_bytes;
    thread->call_bytes = 0;
    if (sw_table_empty(table) && !grow(table))
        return;
    sw_site *s = probe(table, ra, (uint32_t)fn);
    if (!s->ra) {
        if (table->used >= sw_job.cfg.max_sites)
            s = probe(table, ra = SW_OTHER_SITES, (uint32_t)fn);
        if (!s->ra && 2 * (table->used + 1) > table->mask + 1) {
            if (!grow(table))
                return;
            s = probe(table, ra, (uint32_t)fn);
        }
        if (!s->ra) {
            s->ra = ra;
            s->fn = (uint32_t)fn;
            table->used += ra != SW_OTHER_SITES;
        }
    }
    s->calls++;
    s->ticks += dt;
    s->bytes += nbytes;
}

static int by_site(const void *a, const void *b)
{
    const sw_site *x = a, *y = b;
    if (x->ra != y->ra)
        return x->ra < y->ra ? -1 : 1;
    return (x->fn > y->fn) - (x->fn < y->fn);
}

/* This rank's sites merged over threads, sorted by address then function;
 * *out is malloc'ed (NULL when there are none). */
static size_t merged_sites(sw_site **out)
{
    size_t n = 0, k = 0;
    for (sw_thread *t = sw_job.threads; t; t = t->next)
        n += sw_table_empty(&t->sites) ? 0 : t->sites.mask + 1;
    sw_site *all = n ? malloc(n * sizeof *all) : NULL;
    *out = all;
    if (!all)
        return 0;
    for (sw_thread *t = sw_job.threads; t; t = t->next)
        for (uint32_t i = 0; !sw_table_empty(&t->sites) && i <= t->sites.mask; i++)
            if (((sw_site *)t->sites.slots)[i].ra)
                all[k++] = ((sw_site *)t->sites.slots)[i];
    if (k)
        qsort(all, k, sizeof *all, by_site);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && all[m - 1].ra == all[i].ra && all[m - 1].fn == all[i].fn) {
            all[m - 1].calls += all[i].calls;
            all[m - 1].ticks += all[i].ticks;
            all[m - 1].bytes += all[i].bytes;
        } else {
            all[m++] = all[i];
        }
    }
    return m;
}

/* The object a return address lies in, as an absolute path, and the
 * address's offset from the object's load base: the same on every rank
 * whatever the address randomisation.  "" when no object holds it. */
static const char *site_object(uintptr_t ra, uint64_t *offset)
{
    static char exe[4096];
    Dl_info info;
    *offset = ra;
    if (ra <= 1 || !dladdr((void *)ra, &info) || !info.dli_fname)
        return "";
    *offset = ra - (uintptr_t)info.dli_fbase;
    if (info.dli_fname[0] == '/')
        return info.dli_fname;
    /* The main program: glibc names it as it was started (argv[0]). */
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    return exe;
}

/* This rank's call-site record (docs/log-format.md, "call sites"). */
static void pack_sites(sw_buf *b, unsigned log_flags)
{
    (void)log_flags;
    if (!sw_sites_on)
        return;
    sw_site *sites;
    size_t n = merged_sites(&sites);
    put32(b, (uint32_t)sw_job.rank);
    put32(b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        uint64_t offset;
        const char *obj = site_object(sites[i].ra, &offset);
        size_t len = strlen(obj);
        len = len < SW_MAX_PATH ? len : SW_MAX_PATH;
        put16(b, (uint16_t)sites[i].fn);
        put16(b, (uint16_t)len);
        put(b, obj, len);
        put64(b, offset);
        put64(b, sites[i].calls);
        put64(b, sw_ns(sites[i].ticks));
        put64(b, sites[i].bytes);
    }
    free(sites);
}

static void init_sites(void)
{
    sw_sites_on = sw_job.cfg.sites;
    if (sw_sites_on)
        find_fortran_bindings();
}

SW_MODULE(sites_module) = {
    .name = "sites",
    .init = init_sites,
    .section = SW_SEC_CALL_SITES,
    .pack_rank = pack_sites,
};

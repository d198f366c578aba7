/* The module table: every sw_module registered with SW_MODULE lands in the
 * sw_modules linker section, whose bounds the linker provides; sorted once. */
#include <stdlib.h>
#include <string.h>

#include "module.h"

extern const sw_module *const __start_sw_modules[] __attribute__((visibility("hidden")));
extern const sw_module *const __stop_sw_modules[] __attribute__((visibility("hidden")));

#define SW_MAX_MODULES 32

static int by_section(const void *a, const void *b)
{
    const sw_module *x = *(const sw_module *const *)a, *y = *(const sw_module *const *)b;
    uint64_t kx = x->section ? x->section : UINT64_MAX, ky = y->section ? y->section : UINT64_MAX;
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return strcmp(x->name, y->name);
}

const sw_module *const *sw_modules(unsigned *n)
{
    static const sw_module *sorted[SW_MAX_MODULES];
    static unsigned count;
    if (!count) {
        for (const sw_module *const *m = __start_sw_modules; m < __stop_sw_modules && count < SW_MAX_MODULES; m++)
            sorted[count++] = *m;
        qsort(sorted, count, sizeof *sorted, by_section);
    }
    *n = count;
    return sorted;
}

/* Slow paths of credit.h: a datatype's size asked from MPI, and received
 * sizes for an MPI whose status layout is unknown. */
#include "credit.h"

volatile unsigned sw_type_epoch;

uint64_t sw_type_size_slow(sw_thread *thread, unsigned slot, uintptr_t key, MPI_Datatype dt)
{
    int size = 0;
    if (dt == MPI_DATATYPE_NULL || sw_pmpi.Type_size(dt, &size) != MPI_SUCCESS || size < 0)
        size = 0;
    thread->dt[slot] = (sw_dtslot){key, (uint32_t)size, sw_type_epoch};
    return (uint64_t)size;
}

void sw_type_freed(void) { __atomic_add_fetch(&sw_type_epoch, 1, __ATOMIC_RELAXED); }

/* Portable form of sw_status_bytes(), for MPIs whose status layout is unknown. */
uint64_t sw_status_bytes_slow(const MPI_Status *st)
{
    MPI_Count n = 0;
    if (sw_pmpi.Get_elements_x(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
        return 0;
    return (uint64_t)n;
}

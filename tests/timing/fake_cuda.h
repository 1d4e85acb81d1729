/* fake_cuda.h — knobs of the fake CUDA driver in fake_cuda.c (test_timing_fake only).
 * Set them between helper calls from the test's one thread. */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include <stdint.h>

extern int fake_cuda_no_context;        /* cuCtxGetCurrent returns NULL */
extern int fake_cuda_no_map;            /* CAN_MAP_HOST_MEMORY = 0 */
extern int fake_cuda_refuse_wait_value; /* cuStreamWaitValue32 -> CUDA_ERROR_NOT_SUPPORTED */
extern uint64_t fake_cuda_kernel_ns;    /* duration of every (non-spin) kernel */
extern int fake_cuda_context_id;        /* which of 8 fake contexts is current (1..8) */

#endif

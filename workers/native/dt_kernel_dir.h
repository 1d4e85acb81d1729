/* dt_kernel_dir.h — a user's directory of CUDA kernels, served by the native worker's
 * `--kernel-dir DIR` (`dualtime run --impls NAME=cuda:DIR`, issue 17). The contract (file
 * names, entry points, parameters, shape macros, launch geometry and its directive) is
 * in docs/cuda-backend.md, "User kernel directories".
 *
 * Per op, one of `<op>.cu` (CUDA C, compiled by the backend's NVRTC pipeline with the
 * case's shape and dtype as -D macros, parameters: the buffers' device pointers),
 * `<op>.ptx` or `<op>.cubin` (loaded by the driver as they are; parameters: each buffer's
 * pointer followed by its row stride, then m, n[, k], all 64-bit). More than one of them
 * for an op is an error, none means the op is unsupported. The entry point is
 * `<op>_<dtype>` (`softmax_bf16`), or `<op>` for f32 cases.
 *
 * GPU-free: directory scan, file choice, file reading, hashing, the launch directive and
 * the NVRTC option list; the worker (hello) and the CUDA backend (prepare) share it, and
 * tests/cuda/test_kernel_dir exercises it without a GPU.
 *
 * Ownership: plain values; dt_kdir_read returns malloc'd memory the caller frees.
 * Thread-safety: reentrant. */
#ifndef DT_KERNEL_DIR_H
#define DT_KERNEL_DIR_H

#include <stddef.h>

#include "backend_cuda_plan.h"

typedef enum dt_kdir_kind {
    DT_KDIR_NONE = 0, /* the op has no file: unsupported */
    DT_KDIR_CU,       /* <op>.cu: NVRTC, shape macros, pointer parameters */
    DT_KDIR_PTX,      /* <op>.ptx: driver JIT, pointer + stride parameters, then sizes */
    DT_KDIR_CUBIN     /* <op>.cubin: loaded as is, parameters as PTX */
} dt_kdir_kind;

/* The file that serves one op. */
typedef struct dt_kdir_file {
    dt_kdir_kind kind;
    char name[64];    /* "softmax.cu" */
    char path[4096];  /* DIR/softmax.cu */
} dt_kdir_file;

/* DT_OK when dir is a readable directory; else DT_EUNAVAIL with the reason
 * ("--kernel-dir X: no such directory"). */
dt_status dt_kdir_check(const char *dir, dt_err *err);

/* The file of op in dir: DT_OK with f->kind DT_KDIR_NONE when there is none;
 * DT_EINVAL when more than one of <op>.cu/.ptx/.cubin exists. */
dt_status dt_kdir_find(const char *dir, dt_op op, dt_kdir_file *f, dt_err *err);

/* A whole file: *data malloc'd, NUL-terminated after its *len bytes. */
dt_status dt_kdir_read(const char *path, char **data, size_t *len, dt_err *err);

/* SHA-256 of len bytes as lowercase hex. */
void dt_kdir_sha256(const void *data, size_t len, char out[65]);

/* Entry point names for op in dtype, in the order to try: n = 2 for f32 ("<op>_f32",
 * "<op>"), 1 for bf16/f16 ("<op>_bf16"). Returns n. */
int dt_kdir_entries(dt_op op, dt_dtype dtype, char names[2][64]);

/* The launch plan of f for the case L: p->grid, block, shared_bytes, summary; for .cu
 * also p->opts (arch first, then -DM -DN [-DK] -DLDA [-DLDB] -DLDO -DDT_ELEM
 * -DDT_BLOCK_X -DDT_BLOCK_Y). p->kernel_name is the first entry of dt_kdir_entries.
 * text: the file's contents (NULL for a cubin): a line with "dualtime-launch:" in it
 * overrides the default geometry; so does DIR/<op>.launch, which wins. A malformed
 * directive, or a geometry the device cannot launch, is DT_EINVAL naming the file. */
dt_status dt_kdir_plan(const char *dir, const dt_kdir_file *f, const char *text,
                       const dt_case_layout *L, const char *arch, dt_cuda_plan *p,
                       dt_err *err);

#endif

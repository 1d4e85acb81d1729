/* dt_doctor.h — `dualtime doctor`: what this machine can run, and why not.
 *
 * Prints one line per piece dualtime needs (GPU driver and devices, NVRTC, CUPTI,
 * NVML, the PyTorch worker's interpreter and torch, shared memory, the build's own
 * binaries), each "ok" with what was found or "no" with the reason and the fix, then
 * one verdict line per backend (cpu, cuda). Everything is probed at run time: the CUDA
 * libraries are dlopen()ed (no link to libcuda), the interpreter is started with the
 * same discovery order as `dualtime run` (--python, DUALTIME_PYTHON, python3 on PATH,
 * /usr/bin/python3), and the native worker is asked for its hello. Every child has a
 * timeout. Output goes to stdout; nothing is written outside /dev/shm (one test
 * segment, unlinked at once).
 *
 * Usage: dualtime doctor [--python PATH] [--timeout SECONDS]
 * Returns 0 when the cpu backend is usable (the cuda verdict line says whether cuda is),
 * 2 otherwise or on bad arguments. */
#ifndef DT_DOCTOR_H
#define DT_DOCTOR_H

/* argv[0] is the first argument after "doctor"; argc counts from there. */
int dt_doctor_main(int argc, char **argv);

#endif

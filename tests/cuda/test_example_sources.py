"""test_example_sources.py — the CUDA C that examples hand to a run-time compiler must
compile under NVRTC as it is (no GPU: NVRTC only, through ctypes). CuPy's RawModule uses
NVRTC without the host headers nvcc adds, so e.g. INFINITY (math.h) is undefined there:
the CuPy example failed on the H200 that way. Usage: test_example_sources.py REPO LIBNVRTC"""
import ctypes
import re
import sys


def nvrtc_compile(lib, src, name):
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None):
        return "nvrtcCreateProgram failed"
    opts = (ctypes.c_char_p * 1)(b"-arch=compute_90")
    rc = lib.nvrtcCompileProgram(prog, 1, opts)
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value + 1)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return None if rc == 0 else log.value.decode(errors="replace")


def main():
    repo, libpath = sys.argv[1], sys.argv[2]
    lib = ctypes.CDLL(libpath)
    fails = 0
    path = repo + "/examples/cupy-kernel/softmax_cupy.py"
    src = re.search(r'_SRC = r"""(.*?)"""', open(path).read(), re.S).group(1)
    err = nvrtc_compile(lib, src, "softmax_cupy.cu")
    print("ok   " if err is None else "FAIL ", path, "" if err is None else err.strip()[:400])
    fails += err is not None
    # the check can fail: the same source with INFINITY, as the example had it
    bad = src.replace("-__int_as_float(0x7f800000)", "-INFINITY")
    planted = nvrtc_compile(lib, bad, "planted.cu")
    print("ok   " if planted else "FAIL ", "planted INFINITY is refused by NVRTC")
    fails += planted is None or bad == src
    print("test_example_sources: %d failed" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

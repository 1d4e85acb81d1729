// dt_emu_load.hpp — the runner's side of "one shared object a cluster block" (dt_emu.hpp,
// DT_EMU_SO_EXPORTS): loads DIR/k0.so .. k<n-1>.so, each a copy of the same kernel build,
// and returns each copy's anchor (where its statics sit), setup and one-thread run entry.
// Used by emu_rows.cpp, emu_gemv.cpp and emu_gemm_v2.cpp.
#pragma once
#include <barrier>
#include <cstdio>
#include <dlfcn.h>
#include <string>

typedef void (*dt_emu_setup_fn)(std::barrier<> *, std::barrier<> *, void **, int);

// 0 when every copy loaded (its run entry point cast to R), 2 after printing why not.
template <class R>
inline int dt_emu_load_blocks(const char *dir, int n, void **anchors, dt_emu_setup_fn *setup, R *run) {
    for (int j = 0; j < n; j++) {
        const std::string so = std::string(dir) + "/k" + std::to_string(j) + ".so";
        void *h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            std::printf("dlopen %s: %s\n", so.c_str(), dlerror());
            return 2;
        }
        anchors[j] = ((void *(*)(void))dlsym(h, "dt_emu_so_anchor"))();
        setup[j] = (dt_emu_setup_fn)dlsym(h, "dt_emu_so_setup");
        run[j] = (R)dlsym(h, "dt_emu_so_run");
        if (!anchors[j] || !setup[j] || !run[j]) {
            std::printf("%s: missing dt_emu_so_* entry points\n", so.c_str());
            return 2;
        }
    }
    return 0;
}

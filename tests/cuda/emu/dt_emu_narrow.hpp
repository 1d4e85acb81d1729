// dt_emu_narrow.hpp — bf16 / f16 conversions in C++ for the CPU emulation (tests/cuda/emu):
// what the kernels' PTX cvt instructions do (widening exact, narrowing round to nearest
// even, NaN stays NaN), used by dt_cuda_common.cuh under DT_HOST_EMU and by emu_rows.cpp
// to make inputs and read outputs. f16 through GCC's _Float16 (x86-64, GCC >= 12).
#pragma once
#include <cstdint>
#include <cstring>

inline float dt_emu_bf16_to_f32(unsigned short h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline unsigned short dt_emu_f32_to_bf16(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (unsigned short)(u >> 16);
}
inline float dt_emu_f16_to_f32(unsigned short h) {
    _Float16 v;
    std::memcpy(&v, &h, 2);
    return (float)v;
}
inline unsigned short dt_emu_f32_to_f16(float x) {
    const _Float16 v = (_Float16)x; /* IEEE round to nearest even */
    unsigned short h;
    std::memcpy(&h, &v, 2);
    return h;
}

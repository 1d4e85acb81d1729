#!/usr/bin/env python3
"""sass_ops.py — opcode classes of an sm_80/sm_90 cubin's kernel code, for machines with
nvcc but no cuobjdump/nvdisasm (the CPU machine). Reads the ELF .text.<kernel> sections
and counts instructions by their opcode field (the low 12 bits of each 128-bit word);
the names are those known for sm_8x/sm_9x (FFMA 0x223, LDS 0x984, LDG 0x981, STS 0x388,
STG 0x986, BAR 0xb1d, ...), others print as hex. --seq prints the instruction order
run-length encoded (which loads sit between which FFMAs: the software pipelining).

    nvcc -cubin -arch=sm_90 -Xptxas -v -D... kernels/cuda/gemm_v2.cu -o k.cubin
    python3 scripts/sass_ops.py k.cubin [--seq]

A development aid (docs/perf.md, "FP32 gemm: thin shapes and small K"), not a
disassembler: operands, predicates and control bits are not decoded."""
import collections
import struct
import sys

NAMES = {0x223: 'FFMA', 0x984: 'LDS', 0x981: 'LDG', 0x388: 'STS', 0x986: 'STG',
         0xb1d: 'BAR', 0x224: 'IMAD', 0x225: 'IMAD.WIDE', 0x210: 'IADD3', 0x947: 'BRA',
         0x918: 'NOP', 0x819: 'SHF', 0x212: 'LOP3', 0x20c: 'ISETP', 0x802: 'MOV',
         0x221: 'FADD', 0x220: 'FMUL', 0x94d: 'EXIT', 0x919: 'S2R', 0x589: 'SHFL'}


def text_sections(path):
    d = open(path, 'rb').read()
    if d[:4] != b'\x7fELF' or d[4] != 2:
        sys.exit(f'{path}: not a 64-bit ELF cubin')
    shoff = struct.unpack_from('<Q', d, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
    secs = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize) for i in range(shnum)]
    strtab = secs[shstrndx][4]
    for s in secs:
        name = d[strtab + s[0]:d.index(b'\0', strtab + s[0])].decode()
        if name.startswith('.text.'):
            yield name[6:], d[s[4]:s[4] + s[5]]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for kernel, code in text_sections(sys.argv[1]):
        ops = [NAMES.get(struct.unpack_from('<Q', code, i)[0] & 0xfff,
                         '%03x' % (struct.unpack_from('<Q', code, i)[0] & 0xfff))
               for i in range(0, len(code), 16)]
        count = collections.Counter(ops)
        print(f'{kernel}: {len(ops)} instructions')
        for op, n in count.most_common(16):
            print(f'  {op:<10} {n:6d}  {100.0 * n / len(ops):5.1f}%')
        if '--seq' in sys.argv:
            runs, prev, n = [], None, 0
            for op in ops + [None]:
                if op == prev:
                    n += 1
                    continue
                if prev:
                    runs.append(f'{prev}*{n}' if n > 1 else prev)
                prev, n = op, 1
            print('  order: ' + ' '.join(runs))


if __name__ == '__main__':
    main()

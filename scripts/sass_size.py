#!/usr/bin/env python3
"""Static SASS instruction counts of cubins, where no disassembler is at hand
(the build machine has ptxas but neither nvdisasm nor cuobjdump):

  sass_size.py KERNEL.cubin...

prints, per cubin, the instructions in its kernels' .text sections (16 bytes
each on sm_90; the NOPs that pad each section's end not counted) and the most
common values of each instruction's low 12 bits (its opcode field, near enough
to see which kinds of instruction a change adds or removes). Session 33 compared wgmma descriptor variants so:
  ptxas -arch=sm_90a kernel.ptx -o kernel.cubin && scripts/sass_size.py kernel.cubin
"""
import collections
import struct
import sys

NOP = 0x918  # the opcode field of NOP on sm_90 (the padding after a kernel's last branch)


def sections(data):
    """(name, bytes) of each section of an ELF64 file."""
    (offset,) = struct.unpack_from("<Q", data, 0x28)
    size, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, offset + i * size) for i in range(count)]
    names_header = headers[names_index]
    names = data[names_header[4]:names_header[4] + names_header[5]]
    for header in headers:
        name = names[header[0]:names.index(b"\0", header[0])].decode()
        yield name, data[header[4]:header[4] + header[5]]


def fields(text):
    """Each instruction's opcode field, without the section's trailing NOPs."""
    opcodes = [struct.unpack_from("<Q", text, 16 * i)[0] & 0xFFF for i in range(len(text) // 16)]
    while opcodes and opcodes[-1] == NOP:
        opcodes.pop()
    return opcodes


def main(paths):
    for path in paths:
        data = open(path, "rb").read()
        if data[:4] != b"\x7fELF" or data[4] != 2:
            sys.exit(f"{path}: not a 64-bit ELF file (a cubin: ptxas -o, tlc --emit=cubin)")
        opcodes = [op for name, body in sections(data) if name.startswith(".text.")
                   for op in fields(body)]
        count = len(opcodes)
        fields_seen = collections.Counter(opcodes)
        common = " ".join(f"{field:03x}:{n}" for field, n in fields_seen.most_common(12))
        print(f"{path}: {count} instructions; opcode fields {common}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])

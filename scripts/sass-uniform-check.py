#!/usr/bin/env python3
"""Flags kernels whose memory operands read uniform registers that no
instruction of the kernel writes.

usage: scripts/sass-uniform-check.py FILE...   (cubins, objects or binaries)

CUDA 13.0.88's ptxas compiled the main loop of two experimental decode
builds to address their cache-hinted cp.async copies through uniform
registers nothing set (`LDGSTS [R116+UR0], desc[UR1][...]`); those
kernels stopped with an illegal instruction (docs/kernels.md, softmax
attention). This reads the SASS with cuobjdump ($CUOBJDUMP, else PATH,
else /usr/local/cuda/bin) and lists each kernel with such an operand.
Exit status: 0 when none is found, 1 when some are, 2 on a usage or tool
error.
"""
import os
import re
import shutil
import subprocess
import sys

WRITE = re.compile(r"^(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s+(UR\d+)\b")
MEMORY_OPERAND = re.compile(r"\[[^\]]*\]")


def cuobjdump():
    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if not tool and os.access("/usr/local/cuda/bin/cuobjdump", os.X_OK):
        tool = "/usr/local/cuda/bin/cuobjdump"
    return tool


def kernels(sass):
    """{kernel name: [instruction text]} of cuobjdump -sass output."""
    out, name = {}, None
    for line in sass.splitlines():
        if "Function :" in line:
            name = line.split("Function :", 1)[1].strip()
            out[name] = []
        elif name and ";" in line:
            text = re.sub(r"/\*[0-9a-fx]*\*/", "", line).strip()
            if text:
                out[name].append(text)
    return out


def unwritten(instructions):
    written = set()
    for text in instructions:
        m = WRITE.match(text)
        if m:
            written.add(m.group(2))
            if ".64" in m.group(1) or "WIDE" in m.group(1):
                written.add("UR%d" % (int(m.group(2)[2:]) + 1))
    read = set()
    for text in instructions:
        for operand in MEMORY_OPERAND.findall(text):
            read.update(re.findall(r"\bUR\d+\b", operand))
    return sorted(read - written, key=lambda r: int(r[2:]))


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 2 if len(argv) < 2 else 0
    tool = cuobjdump()
    if not tool:
        print("sass-uniform-check: cuobjdump not found (set CUOBJDUMP or put "
              "the CUDA toolkit's bin on PATH)", file=sys.stderr)
        return 2
    found = 0
    for path in argv[1:]:
        if not os.path.isfile(path):
            print("sass-uniform-check: %s: no such file" % path, file=sys.stderr)
            return 2
        run = subprocess.run([tool, "-sass", path], capture_output=True,
                             text=True)
        if run.returncode != 0:
            print("sass-uniform-check: %s: cuobjdump failed: %s" %
                  (path, run.stderr.strip()), file=sys.stderr)
            return 2
        for name, instructions in kernels(run.stdout).items():
            regs = unwritten(instructions)
            if regs:
                found += 1
                print("%s: %s reads %s, never written" %
                      (path, name, ", ".join(regs)))
    print("%d kernel(s) with unwritten uniform registers in memory operands"
          % found)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

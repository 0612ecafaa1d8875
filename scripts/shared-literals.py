#!/usr/bin/env python3
"""String literals that appear in both of two source trees (comments dropped, interpolated
literals skipped): how often the client and the provider spell the same text, which the
LatchkeyProtocol module exists to avoid.

    scripts/shared-literals.py Sources/Latchkey Sources/LatchkeyIdP
"""
import re, sys, pathlib
def lits(root):
    out = set()
    for p in pathlib.Path(root).rglob('*.swift'):
        text = p.read_text()
        text = re.sub(r'//[^\n]*', '', text)  # drop comments (crude)
        for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', text):
            s = m.group(1)
            if s and '\\(' not in s:
                out.add(s)
    return out
a = lits(sys.argv[1]); b = lits(sys.argv[2])
shared = sorted(a & b)
print(len(shared))
for s in shared: print(repr(s))

#!/usr/bin/env python3
"""String literals that appear in both of two source trees (comments dropped, interpolated
literals skipped): how often the client and the provider spell the same text, which the
shared types of LatchkeyOAuth and LatchkeyProtocol exist to avoid.

The first number counts words: literals with at least two letters, which is where a
parameter, a claim or an error code would hide. Literals of punctuation and digits alone
(" ", "/", ":", "0") are listed after it with their own count; they are the grammar of
messages and paths, not vocabulary, and are not a measure of duplication. Multi-line
literals (triple-quoted: SQL, the browser pages' script and stylesheet) are whole documents
in another language, not spellings of the protocol, and are left out.

    scripts/shared-literals.py Sources/Latchkey Sources/LatchkeyIdP
"""
import re, sys, pathlib


def lits(root):
    out = set()
    for p in pathlib.Path(root).rglob('*.swift'):
        text = p.read_text()
        text = re.sub(r'#*"""[\s\S]*?"""#*', '', text)  # drop multi-line literals
        text = re.sub(r'//[^\n]*', '', text)  # drop comments (crude)
        for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', text):
            s = m.group(1)
            if s and '\\(' not in s:
                out.add(s)
    return out


a = lits(sys.argv[1]); b = lits(sys.argv[2])
shared = sorted(a & b)
words = [s for s in shared if len(re.findall(r'[A-Za-z]', s)) >= 2]
rest = [s for s in shared if s not in words]
print(len(words))
for s in words: print(repr(s))
print(f'-- punctuation and digits only: {len(rest)}')
for s in rest: print(repr(s))

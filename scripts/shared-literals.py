#!/usr/bin/env python3
"""String literals that appear in both of two source trees: how often the client and the
provider spell the same text, which the shared types of LatchkeyOAuth and LatchkeyProtocol
exist to avoid (issue 51; docs/ARCHITECTURE.md, "One vocabulary").

Counted: every Swift string literal outside `//` comments, single- and multi-line (triple
quotes, raw literals with `#` too), whose text has no capital letter, holds a letter and is 4 or
more characters long: where a parameter name, a claim, an error code or a grant type would
hide. SQL and the browser pages' script count like any other Swift string; they stay out
of the count only by living in files that are not Swift.

    scripts/shared-literals.py Sources/LatchkeyOAuth Sources/LatchkeyIdP [--max N]

Prints the count, then the shared literals; with --max, exits 1 when the count is over N.
"""
import pathlib
import re
import sys


def literals(root):
    """Every string literal's text in the Swift files under `root`."""
    found = set()
    for path in pathlib.Path(root).rglob('*.swift'):
        text = path.read_text()
        index = 0
        while index < len(text):
            if text.startswith('//', index):
                end = text.find('\n', index)
                index = len(text) if end < 0 else end
                continue
            if text.startswith('/*', index):
                end = text.find('*/', index + 2)
                index = len(text) if end < 0 else end + 2
                continue
            match = re.compile(r'(#*)("""|")').match(text, index)
            if not match:
                index += 1
                continue
            hashes, quote = match.group(1), match.group(2)
            start = match.end()
            closing = quote + hashes
            position = start
            while True:
                end = text.find(closing, position)
                if end < 0:
                    end = len(text)
                    break
                # An escaped quote (`\"`) in a non-raw literal does not close it.
                if not hashes and quote == '"' and text[end - 1] == '\\' and not text[max(0, end - 2)] == '\\':
                    position = end + 1
                    continue
                break
            body = text[start:end]
            if quote == '"""':
                body = body.strip('\n')
            found.add(body)
            index = end + len(closing)
    return found


def counted(literal):
    return len(literal) >= 4 and re.search(r'[a-z]', literal) is not None and literal == literal.lower()


def main(arguments):
    limit = None
    if '--max' in arguments:
        at = arguments.index('--max')
        limit = int(arguments[at + 1])
        arguments = arguments[:at] + arguments[at + 2:]
    first, second = arguments
    shared = sorted(s for s in literals(first) & literals(second) if counted(s))
    print(f'{len(shared)} lowercase literals of 4+ characters shared by {first} and {second}')
    for literal in shared:
        print('  ' + repr(literal))
    if limit is not None and len(shared) > limit:
        print(f'over the limit of {limit}: declare the name once (LatchkeyOAuth or LatchkeyProtocol) and use it on both sides')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

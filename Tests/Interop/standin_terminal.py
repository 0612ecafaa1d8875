#!/usr/bin/env python3
"""A stand-in for a terminal emulator, for the desktop link tests (DesktopLinkTests).

xdg-open runs a `Terminal=true` desktop entry as `$TERMINAL -e program args...`. This runs
the program on a pseudo-terminal, as a terminal window would, types the bytes of the file
named by LATCHKEY_TEST_ANSWERS into it, appends everything the program showed to the file
named by LATCHKEY_TEST_TRANSCRIPT, and exits with the program's status.
"""
import os
import pty
import sys

arguments = sys.argv[1:]
if arguments[:1] == ["-e"]:
    arguments = arguments[1:]
if not arguments:
    sys.exit("standin_terminal: no program to run")

with open(os.environ["LATCHKEY_TEST_ANSWERS"], "rb") as answers_file:
    answers = answers_file.read()
transcript = open(os.environ["LATCHKEY_TEST_TRANSCRIPT"], "ab")
typed = False


def type_answers(_fd):
    # Called when stdin is readable; the answers are typed once, then stdin is done.
    global typed
    if typed:
        return b""
    typed = True
    return answers


def show(fd):
    data = os.read(fd, 4096)
    transcript.write(data)
    transcript.flush()
    return data


status = pty.spawn(arguments, show, type_answers)
sys.exit(os.waitstatus_to_exitcode(status))

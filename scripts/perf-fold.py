#!/usr/bin/env python3
"""Folds a `perf script` of `latchkey serve` into where its CPU goes (docs/PERFORMANCE.md).

    perf record -F 999 -g -p <PID of latchkey serve> -o perf.data -- sleep 10
    perf script -i perf.data | scripts/perf-fold.py [--top 25] [--folded out.folded]
        [--from S] [--to S] [--unit-ms MS]

Prints two tables of the samples' shares:
  - by area: the first marker found walking each stack from its innermost frame out
    (the kernel's thread switching, OpenSSL, SQLite, JSON, logging, tickets, WebAuthn,
    SwiftNIO, Hummingbird, Swift's runtime and allocator, ...);
  - by the innermost Latchkey frame: the function of ours each sample was spent under,
    demangled with `swift demangle --simplified`.
With --folded it also writes the stacks folded one per line (frames outermost first,
joined by ';', then the count), the input flamegraph tools take.

--from and --to keep the samples taken that many seconds after the first one, so one
recording of a whole `latchkey-bench --only store` round splits into its sign-ins and
its floor (the sign-ins come first; where the floor's begin shows in `perf script`'s
timestamps, or as the first samples under HealthRoutes). With --unit-ms, the CPU
milliseconds one unit cost in that window (the benchmark's "server CPU ms/sign-in", or
its floor), the area table also gives each area in microseconds per unit, which is how
a sign-in's areas compare with four bare requests' (docs/PERFORMANCE.md, "Persisted
provider").
"""
import argparse
import collections
import re
import subprocess
import sys

OURS = re.compile(r"^\$s(11LatchkeyIdP|14LatchkeyCrypto|16LatchkeyWebAuthn|13LatchkeyOAuth|16LatchkeyProtocol|8Latchkey|11LatchkeyCLI|19LatchkeyCommandLine|15LatchkeyLogging|12LatchkeyHost)")

# (area, test on a frame "symbol (dso)"), tried on each frame from the innermost out; the
# first area whose test matches any frame, in this order of frames, wins.
AREAS = [
    ("kernel: thread switches", lambda f: "kernel" in f and re.search(r"finish_task_switch|__schedule\b", f)),
    ("kernel: loopback TCP, epoll and other system calls", lambda f: "kernel" in f),
    ("OpenSSL", lambda f: "libcrypto" in f or "libssl" in f),
    ("SQLite", lambda f: re.search(r"\bsqlite3|sqlite_nio_sqlite3", f)),
    ("logging (one line per request)", lambda f: re.search(r"LogHandler|7Logging", f)),
    ("tickets (seal and open)", lambda f: "TicketSealer" in f),
    ("JSON encoding", lambda f: re.search(r"JSONEncoder|JSONWriter|JSONEncodable|_JSONEncoder|JSONFragmentWriter", f)),
    ("JSON decoding", lambda f: re.search(r"JSONDecoder|JSONScanner|JSONMap|_JSONDecoder", f)),
    ("WebAuthn checks", lambda f: "16LatchkeyWebAuthn" in f),
    ("form and query decoding", lambda f: "FormEncoding" in f),
    ("the store's statements (Latchkey side)", lambda f: re.search(r"SQLiteHandle|SQLiteTransactionHandle|SQLiteProviderDatabase|PostgresProviderDatabase|SQLRow", f)),
    ("Latchkey's own code (routes, checks, ledgers)", lambda f: OURS.match(symbol(f))),
    ("Hummingbird routing and responses", lambda f: "11Hummingbird" in f or "HummingbirdCore" in f),
    ("SwiftNIO (event loops, channels, HTTP)", lambda f: re.search(r"\$s(8NIOPosix|7NIOCore|10NIOHTTP1|8NIOHTTP1)|c_nio_llhttp", f)),
    ("Swift concurrency runtime", lambda f: re.search(r"swift_task|swift_job|swift::AsyncTask|swift_continuation|runJobInEstablishedExecutorContext", f)),
    ("allocator and reference counting", lambda f: re.search(r"\b(malloc|free|cfree|_int_malloc|_int_free|malloc_consolidate|swift_retain|swift_release|swift_allocObject|swift_deallocObject)\b", f)),
]


TIME = re.compile(r"\s(\d+\.\d+):")


def timed_samples(lines):
    """Yields each sample's time (seconds, as perf printed it; None when its header
    carries none) and its frames, innermost first, as 'symbol (dso)'."""
    frames = []
    time = None
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                yield time, frames
            frames = []
            continue
        if line.startswith((" ", "\t")):
            parts = line.strip().split(" ", 1)
            if len(parts) == 2:
                frames.append(parts[1])
        else:
            if frames:
                yield time, frames
                frames = []
            found = TIME.search(" " + line)
            time = float(found.group(1)) if found else None
    if frames:
        yield time, frames


def samples(lines):
    """Yields each sample's frames, innermost first, as 'symbol (dso)'."""
    for _, frames in timed_samples(lines):
        yield frames


def symbol(frame):
    name = frame.rsplit(" (", 1)[0]
    return re.sub(r"\+0x[0-9a-f]+$", "", name)


def area_of(frames):
    for frame in frames:
        for area, test in AREAS:
            if test(frame):
                return area
    return "other"


def demangle(names):
    if not names:
        return {}
    try:
        output = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
        return dict(zip(names, output.splitlines()))
    except (OSError, subprocess.CalledProcessError):
        return {name: name for name in names}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=25, help="rows of the by-frame table")
    parser.add_argument("--folded", help="also write folded stacks here")
    parser.add_argument("--from", dest="start", type=float, help="keep samples taken at least this many seconds after the first")
    parser.add_argument("--to", dest="end", type=float, help="keep samples taken less than this many seconds after the first")
    parser.add_argument("--unit-ms", type=float, help="CPU ms of one unit (a sign-in, four bare requests) in the window: areas also in µs per unit")
    arguments = parser.parse_args()

    areas = collections.Counter()
    ours = collections.Counter()
    folded = collections.Counter()
    total = 0
    first = None
    for time, frames in timed_samples(sys.stdin):
        if time is not None and first is None:
            first = time
        if arguments.start is not None or arguments.end is not None:
            if time is None:
                sys.exit("perf-fold: --from and --to need perf script's timestamps (its default output has them)")
            offset = time - first
            if (arguments.start is not None and offset < arguments.start) or (arguments.end is not None and offset >= arguments.end):
                continue
        total += 1
        areas[area_of(frames)] += 1
        innermost = next((symbol(f) for f in frames if OURS.match(symbol(f))), "(no Latchkey frame)")
        ours[innermost] += 1
        if arguments.folded:
            folded[";".join(symbol(f) for f in reversed(frames))] += 1
    if total == 0:
        sys.exit("perf-fold: no samples on stdin")

    print(f"{total} samples\n")
    if arguments.unit_ms:
        print("| area | share | µs per unit |\n|---|---:|---:|")
        for area, count in areas.most_common():
            print(f"| {area} | {100 * count / total:.1f}% | {1000 * arguments.unit_ms * count / total:.0f} |")
    else:
        print("| area | share |\n|---|---:|")
        for area, count in areas.most_common():
            print(f"| {area} | {100 * count / total:.1f}% |")
    names = demangle([name for name, _ in ours.most_common(arguments.top)])
    print("\n| innermost Latchkey frame | share |\n|---|---:|")
    for name, count in ours.most_common(arguments.top):
        shown = names.get(name, name).replace("|", "\\|")
        if len(shown) > 140:
            shown = shown[:137] + "..."
        print(f"| {shown} | {100 * count / total:.1f}% |")
    if arguments.folded:
        with open(arguments.folded, "w") as out:
            for stack, count in folded.items():
                out.write(f"{stack} {count}\n")


if __name__ == "__main__":
    main()

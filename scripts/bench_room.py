"""``scripts/bench room``: what the room history costs the cycle that reads it cold (no cache: a restart, and the
first cycle of each hour, since its period is aligned on the hour as the baselines' is).

The room model (wanmon/diagnosis/room.py) learns from each baseline TCP test's rate and the room the load left it on
the path's polled ports, one 5-minute rollup probe per test and port (``room_history``). The world: ``--sites``
border ports with ``--days`` (default: what the cycle reads, ROOM_HISTORY_S) of 5-minute rollups, path
directions between them testing TCP every ``--tcp-interval-h`` hours as long, each crossing its source's port out
and its destination's in. The statement is timed over N directions for each size, other directions than the sizes
before (its probes are its own), in a transaction with JIT off as the cycle's shards run it. The last line is
machine-readable:
    room_history_s_<N>=<float> ... room_history_ms_per_path=<float at the largest size>
"""

from __future__ import annotations

import argparse
import os
import random
import time
from datetime import UTC, datetime, timedelta

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wanmon.settings")
import django  # noqa: E402

django.setup()

from django.db import connection, transaction  # noqa: E402

from wanmon.diagnosis import constants as k  # noqa: E402
from wanmon.diagnosis.selectors.baselines import room_history  # noqa: E402
from wanmon.diagnosis.shards import _without_jit  # noqa: E402

END = datetime(2026, 6, 22, tzinfo=UTC)
SPEED_BPS = 100e9


def _say(text: str) -> None:
    print(text, flush=True)


def load(sites: int, paths: int, days: float, tcp_interval_h: float) -> list[tuple[int, int]]:
    """Insert the rollups and the tests; return the directions (src, dst) in a shuffled order."""
    start = END - timedelta(days=days)
    rng = random.Random(7)
    pairs = [(s, d) for s in range(1, sites + 1) for d in range(1, sites + 1) if s != d]
    rng.shuffle(pairs)
    pairs = pairs[:paths]
    t0 = time.perf_counter()
    with connection.cursor() as c:
        c.execute(
            """INSERT INTO measurements_interfacerate_5m (time, interface_id, samples, covered_s, in_bps_avg,
                   out_bps_avg)
               SELECT t, i, 5, 300, 2e10 + 1e10 * sin(extract(epoch FROM t) / 13751 + i),
                      3e10 + 1e10 * cos(extract(epoch FROM t) / 13751 + i)
               FROM generate_series(1, %s) i,
                    generate_series(%s::timestamptz, %s::timestamptz, interval '5 minutes') t""",
            [sites, start, END],
        )
        c.execute(
            """INSERT INTO measurements_throughputtest (time, src_id, dst_id, tool, protocol, duration_s,
                   throughput_bps)
               SELECT %s::timestamptz + (k * %s + (p.src * 7 + p.dst) %% 60) * interval '1 minute',
                      p.src, p.dst, 'nuttcp', 'tcp', 10, 6e10
               FROM unnest(%s::bigint[], %s::bigint[]) AS p(src, dst),
                    generate_series(0, %s) k""",
            [start, int(tcp_interval_h * 60), [s for s, _ in pairs], [d for _, d in pairs],
             int(days * 24 / tcp_interval_h) - 1],
        )
        c.execute("ANALYZE measurements_interfacerate_5m")
        c.execute("ANALYZE measurements_throughputtest")
    _say(f"world: {sites} ports x {days:g} days of 5-minute rollups, {paths} directions testing every "
         f"{tcp_interval_h:g} h, in {time.perf_counter() - t0:.1f} s")
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/bench room")
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--days", type=float, default=k.ROOM_HISTORY_S / 86400, help="history read (the cycle's)")
    parser.add_argument("--tcp-interval-h", type=float, default=6.0)
    parser.add_argument("--sizes", default="1000,3000,10000", help="numbers of directions read (comma-separated)")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    pairs = load(args.sites, sum(sizes), args.days, args.tcp_interval_h)
    start = END - timedelta(days=args.days)
    figures, offset = [], 0
    for n in sizes:
        chunk = pairs[offset:offset + n]
        offset += n
        ports = {(s, d): ((s, "out", SPEED_BPS), (d, "in", SPEED_BPS)) for s, d in chunk}
        t0 = time.perf_counter()
        with transaction.atomic():
            _without_jit()  # as the cycle's shards read it
            history = room_history(ports, start, END)
        seconds = time.perf_counter() - t0
        tests = sum(len(v) for v in history.values())
        figures.append((n, seconds))
        _say(f"{n} directions: {tests} tests with their room in {seconds:.2f} s ({seconds / n * 1000:.2f} ms a path, "
             f"{seconds / max(tests, 1) * 1e6:.1f} us a test of two ports)")
    print(" ".join(f"room_history_s_{n}={s:.2f}" for n, s in figures)
          + f" room_history_ms_per_path={figures[-1][1] / figures[-1][0] * 1000:.2f}")


if __name__ == "__main__":
    main()

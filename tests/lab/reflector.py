"""``python -m tests.lab.reflector HOST PORT``: the project's TWAMP-light reflector on HOST:PORT until SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import sys

from collectors.twamp import serve_reflector


async def _serve(host: str, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    transport = await serve_reflector(host, port)
    print(f"reflecting on {host}:{port}", flush=True)  # noqa: T201 - the harness waits for this line
    await stop.wait()
    transport.close()


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1], int(sys.argv[2])))

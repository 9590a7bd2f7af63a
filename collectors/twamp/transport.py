"""TWAMP-light I/O (asyncio + socket only): UDP endpoints that read the TTL of each datagram, the stateless
reflector and the sender of one session."""

from __future__ import annotations

import asyncio
import math
import os
import socket
import struct
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final

from collectors.ntp import U32, ntp_now
from collectors.twamp.stats import ReflectedPacket, SentPacket, TwampStats, compute_stats
from collectors.twamp.wire import (
    DEFAULT_PADDING_BYTES,
    MAX_UDP_PAYLOAD_BYTES,
    REFLECTOR_IDLE_TIMEOUT_S,
    REFLECTOR_MAX_SENDERS,
    SEND_TTL,
    SENDER_HEADER_BYTES,
    UNSYNCED_ERROR,
    ErrorEstimate,
    PacketError,
    SenderPacket,
    decode_reflector_packet,
    decode_sender_packet,
    encode_reflector_packet,
    encode_sender_packet,
    reflect_packet,
)

# --- UDP transport with TTL ----------------------------------------------------------------------

# Linux values (linux/in.h); Python's socket module does not export IP_RECVTTL.
_IP_RECVTTL: Final = getattr(socket, "IP_RECVTTL", 12 if sys.platform.startswith("linux") else None)
_IP_TTL_CMSG: Final = socket.IP_TTL
_IPV6_RECVHOPLIMIT: Final = getattr(socket, "IPV6_RECVHOPLIMIT", None)
_IPV6_HOPLIMIT: Final = getattr(socket, "IPV6_HOPLIMIT", None)
_CMSG_BYTES: Final = socket.CMSG_SPACE(struct.calcsize("i")) * 2
_MAX_READS_PER_WAKEUP: Final = 64  # let other callbacks (the sender's schedule) run under a flood


class TtlDatagramProtocol(asyncio.DatagramProtocol):
    """A datagram protocol that also wants the TTL / hop limit each datagram arrived with."""

    def datagram_received_with_ttl(self, data: bytes, addr: Any, ttl: int | None) -> None:
        """Called instead of ``datagram_received`` by :func:`open_udp_endpoint` transports."""
        self.datagram_received(data, addr)


def _ttl_from_ancdata(ancdata: list[tuple[int, int, bytes]]) -> int | None:
    for level, kind, data in ancdata:
        if (level, kind) in ((socket.IPPROTO_IP, _IP_TTL_CMSG), (socket.IPPROTO_IPV6, _IPV6_HOPLIMIT)) and data:
            return data[0] if len(data) < 4 else struct.unpack("i", data[:4])[0]
    return None


class _UdpTransport(asyncio.DatagramTransport):
    """Selector-loop datagram transport reading with recvmsg, to see the received TTL.

    asyncio's own transport uses recvfrom and drops ancillary data. Sends never block or
    buffer: a datagram the kernel will not take now is reported and dropped, like on the wire.
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, sock: socket.socket, protocol: asyncio.DatagramProtocol, connected: bool
    ) -> None:
        peer = sock.getpeername() if connected else None
        super().__init__(extra={"socket": sock, "sockname": sock.getsockname(), "peername": peer})
        self._loop = loop
        self._sock = sock
        self._protocol = protocol
        self._connected = connected
        self._closing = False
        loop.add_reader(sock.fileno(), self._read_ready)
        protocol.connection_made(self)

    def _read_ready(self) -> None:
        for _ in range(_MAX_READS_PER_WAKEUP):
            if self._closing:
                return
            try:
                data, ancdata, _flags, addr = self._sock.recvmsg(MAX_UDP_PAYLOAD_BYTES + 1, _CMSG_BYTES)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # ICMP errors on a connected socket surface here
                self._protocol.error_received(exc)
                continue
            ttl = _ttl_from_ancdata(ancdata)
            if isinstance(self._protocol, TtlDatagramProtocol):
                self._protocol.datagram_received_with_ttl(data, addr, ttl)
            else:
                self._protocol.datagram_received(data, addr)

    def sendto(self, data: Any, addr: Any = None) -> None:
        if self._closing:
            return
        try:
            if self._connected and addr is None:
                self._sock.send(data)
            else:
                self._sock.sendto(data, addr)
        except OSError as exc:
            self._protocol.error_received(exc)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._loop.remove_reader(self._sock.fileno())
        self._sock.close()
        self._loop.call_soon(self._protocol.connection_lost, None)

    def abort(self) -> None:
        self.close()

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._protocol

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._protocol = protocol  # type: ignore[assignment]

    def get_write_buffer_size(self) -> int:
        return 0


def _configure_ttl(sock: socket.socket, family: int) -> None:
    """Send with TTL 255 and ask for the received TTL; best effort (unknown TTLs are 0 on the wire)."""
    try:
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, SEND_TTL)
            if _IPV6_RECVHOPLIMIT is not None:
                sock.setsockopt(socket.IPPROTO_IPV6, _IPV6_RECVHOPLIMIT, 1)
        else:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, SEND_TTL)
            if _IP_RECVTTL is not None:
                sock.setsockopt(socket.IPPROTO_IP, _IP_RECVTTL, 1)
    except OSError:
        pass  # an exotic stack: measure without hop counts rather than not at all


async def open_udp_endpoint(
    protocol: asyncio.DatagramProtocol,
    *,
    local: tuple[str, int] | None = None,
    remote: tuple[str, int] | None = None,
) -> asyncio.DatagramTransport:
    """A UDP socket bound to ``local`` and/or connected to ``remote``, sending with TTL 255.

    On selector event loops the transport reports each datagram's TTL to a
    :class:`TtlDatagramProtocol`; elsewhere (no ``add_reader``) it falls back to asyncio's
    transport and the TTL is unknown. Raises OSError when the address does not resolve or bind.
    """
    loop = asyncio.get_running_loop()
    if remote is not None:
        infos = await loop.getaddrinfo(remote[0], remote[1], type=socket.SOCK_DGRAM)
    elif local is not None:
        infos = await loop.getaddrinfo(local[0], local[1], type=socket.SOCK_DGRAM, flags=socket.AI_PASSIVE)
    else:
        raise ValueError("open_udp_endpoint needs a local or a remote address")
    family, kind, proto, _name, sockaddr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setblocking(False)
        _configure_ttl(sock, family)
        if local is not None:
            sock.bind(sockaddr if remote is None else (local[0], local[1]))
        if remote is not None:
            sock.connect(sockaddr)  # UDP: no traffic; filters sources and reports ICMP errors
        try:
            return _UdpTransport(loop, sock, protocol, connected=remote is not None)
        except NotImplementedError:  # e.g. Windows proactor loop: no add_reader
            transport, _ = await loop.create_datagram_endpoint(lambda: protocol, sock=sock)
            return transport
    except BaseException:
        sock.close()
        raise


# --- reflector ---------------------------------------------------------------------------------


class Reflector(TtlDatagramProtocol):
    """TWAMP-light Session-Reflector: answers every sender packet at once (RFC 5357 §4.2).

    Keeps no session, only a reflector sequence number per sender address and port
    (see the module docstring). ``now_fn`` gives NTP timestamps, ``error_estimate`` is this
    host's clock error; ``clock`` (monotonic seconds) only ages the per-sender counters.
    Malformed datagrams get no answer.
    """

    def __init__(
        self,
        *,
        now_fn: Callable[[], int] = ntp_now,
        error_estimate: ErrorEstimate = UNSYNCED_ERROR,
        idle_timeout_s: float = REFLECTOR_IDLE_TIMEOUT_S,
        max_senders: int = REFLECTOR_MAX_SENDERS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.now_fn = now_fn
        self.error_estimate = error_estimate
        self.idle_timeout_s = idle_timeout_s
        self.max_senders = max_senders
        self._clock = clock
        self._senders: OrderedDict[Any, tuple[int, float]] = OrderedDict()  # addr -> (next seq, last heard)
        self.transport: asyncio.DatagramTransport | None = None
        self.reflected = 0
        self.malformed = 0
        self.socket_errors = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def error_received(self, exc: Exception) -> None:
        self.socket_errors += 1  # a sender that went away (ICMP unreachable): nothing to do

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.datagram_received_with_ttl(data, addr, None)

    def datagram_received_with_ttl(self, data: bytes, addr: Any, ttl: int | None) -> None:
        reply = self.reflect(data, addr, ttl)
        if reply is not None and self.transport is not None:
            self.transport.sendto(reply, addr)

    def next_seq(self, addr: Any) -> int:
        """Take the reflector sequence number for the next packet from ``addr``."""
        now = self._clock()
        entry = self._senders.pop(addr, None)
        seq = 0 if entry is None or now - entry[1] > self.idle_timeout_s else entry[0]
        self._senders[addr] = ((seq + 1) % U32, now)
        while len(self._senders) > self.max_senders:
            self._senders.popitem(last=False)
        return seq

    def reflect(
        self, data: bytes, addr: Any, ttl: int | None = None, *, received_at: int | None = None
    ) -> bytes | None:
        """The reply to one datagram (None if it is not a sender packet); advances ``addr``'s count."""
        t2 = self.now_fn() if received_at is None else received_at
        try:
            request = decode_sender_packet(data)
        except PacketError:
            self.malformed += 1
            return None
        seq = self.next_seq(addr)
        self.reflected += 1
        reply = reflect_packet(
            request,
            seq=seq,
            receive_timestamp=t2,
            send_timestamp=self.now_fn(),
            error_estimate=self.error_estimate,
            ttl=ttl,
        )
        return encode_reflector_packet(reply)


async def serve_reflector(
    host: str, port: int, protocol: asyncio.DatagramProtocol | None = None
) -> asyncio.DatagramTransport:
    """Serve ``protocol`` (a new :class:`Reflector` by default) on ``host``:``port`` (0: a free port).

    Bind a multi-homed host to the address senders use: replies leave from the bound address,
    and senders accept replies only from the address they sent to. Close the returned
    transport to stop; ``transport.get_extra_info("sockname")`` gives the port.
    """
    return await open_udp_endpoint(protocol if protocol is not None else Reflector(), local=(host, port))


# --- sender ------------------------------------------------------------------------------------


class _SenderProtocol(TtlDatagramProtocol):
    def __init__(self, now_fn: Callable[[], int]) -> None:
        self.now_fn = now_fn
        self.received: list[ReflectedPacket] = []
        self.malformed = 0
        self.socket_errors = 0
        self.socket_error: str | None = None

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.datagram_received_with_ttl(data, addr, None)

    def datagram_received_with_ttl(self, data: bytes, addr: Any, ttl: int | None) -> None:
        t4 = self.now_fn()
        try:
            packet = decode_reflector_packet(data)
        except PacketError:
            self.malformed += 1
            return
        self.received.append(ReflectedPacket(packet=packet, receive_timestamp=t4, ttl=ttl))

    def error_received(self, exc: Exception) -> None:
        self.socket_errors += 1
        if self.socket_error is None:
            self.socket_error = str(exc) or type(exc).__name__


async def run_session(
    target_host: str,
    target_port: int,
    *,
    packets: int = 100,
    interval_s: float = 0.1,
    timeout_s: float = 2.0,
    padding_bytes: int = DEFAULT_PADDING_BYTES,
    now_fn: Callable[[], int] = ntp_now,
    clock_error_estimate: ErrorEstimate = UNSYNCED_ERROR,
) -> TwampStats:
    """Send ``packets`` test packets ``interval_s`` apart to a TWAMP-light reflector and measure.

    Packets leave on a fixed schedule (no drift: packet i at start + i * interval_s). Replies
    are collected until ``timeout_s`` after the last packet left, so the session lasts
    (packets - 1) * interval_s + timeout_s, and a packet counts as lost when no reply came
    within at least ``timeout_s``. ``now_fn`` gives the T1/T4 NTP timestamps;
    ``clock_error_estimate`` is this host's clock error, sent in every packet (leave it
    unsynchronised unless NTP says otherwise). The padding is random (RFC 4656 §4.1.2), 27
    octets by default so that the replies have the size of the requests.

    Raises ValueError for impossible arguments and OSError when the target does not resolve
    or no socket can be opened; socket errors during the session (ICMP port unreachable) are
    counted in the result, which is never partial: the socket is closed on every path.
    """
    if not 1 <= packets <= U32:
        raise ValueError(f"packets must be 1..2^32, got {packets}")
    if not (math.isfinite(interval_s) and interval_s >= 0 and math.isfinite(timeout_s) and timeout_s > 0):
        raise ValueError(f"interval_s must be >= 0 and timeout_s > 0, got {interval_s} and {timeout_s}")
    if not 0 <= padding_bytes <= MAX_UDP_PAYLOAD_BYTES - SENDER_HEADER_BYTES:
        raise ValueError(f"padding_bytes must be 0..{MAX_UDP_PAYLOAD_BYTES - SENDER_HEADER_BYTES}")
    loop = asyncio.get_running_loop()
    receiver = _SenderProtocol(now_fn)
    transport = await open_udp_endpoint(receiver, remote=(target_host, target_port))
    padding = os.urandom(padding_bytes)
    sent: list[SentPacket] = []
    try:
        start = loop.time()
        for seq in range(packets):
            wait_s = start + seq * interval_s - loop.time()
            if wait_s > 0:
                await asyncio.sleep(wait_s)
            t1 = now_fn()
            data = encode_sender_packet(SenderPacket(seq, t1, clock_error_estimate, padding))
            transport.sendto(data)
            sent.append(SentPacket(seq=seq, timestamp=t1, size_bytes=len(data)))
        await asyncio.sleep(timeout_s)
    finally:
        transport.close()
    stats = compute_stats(sent, receiver.received)
    return replace(
        stats,
        packet_interval_s=interval_s if interval_s > 0 else None,
        malformed=receiver.malformed,
        socket_errors=receiver.socket_errors,
        socket_error=receiver.socket_error,
    )

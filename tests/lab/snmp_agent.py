"""A small SNMPv2c responder for the emulated router: GET, GETNEXT and GETBULK over a live MIB.

The MIB is a function returning ``{oid tuple: value}`` at the moment of the request, so the counters a poll reads
are the emulator's own at that moment (no data file to rewrite). Messages are decoded and encoded with pysnmp's
protocol layer (the agent's own SNMP library), so the responder speaks exactly what a real router does to it.
"""

from __future__ import annotations

import bisect
import select
import socket
import threading
from collections.abc import Callable, Mapping, Sequence

from pyasn1.codec.ber import decoder, encoder
from pysnmp.proto import api, rfc1902, rfc1905

Oid = tuple[int, ...]
Mib = Callable[[], Mapping[Oid, object]]

SYS = (1, 3, 6, 1, 2, 1, 1)
IF_ENTRY = (1, 3, 6, 1, 2, 1, 2, 2, 1)
IFX_ENTRY = (1, 3, 6, 1, 2, 1, 31, 1, 1, 1)

# column -> (IF-MIB column OID, SNMP type)
IF_COLUMNS: Mapping[str, tuple[Oid, type]] = {
    "ifIndex": (IF_ENTRY + (1,), rfc1902.Integer32),
    "ifDescr": (IF_ENTRY + (2,), rfc1902.OctetString),
    "ifType": (IF_ENTRY + (3,), rfc1902.Integer32),
    "ifMtu": (IF_ENTRY + (4,), rfc1902.Integer32),
    "ifSpeed": (IF_ENTRY + (5,), rfc1902.Gauge32),
    "ifAdminStatus": (IF_ENTRY + (7,), rfc1902.Integer32),
    "ifOperStatus": (IF_ENTRY + (8,), rfc1902.Integer32),
    "ifInOctets": (IF_ENTRY + (10,), rfc1902.Counter32),
    "ifInUcastPkts": (IF_ENTRY + (11,), rfc1902.Counter32),
    "ifInDiscards": (IF_ENTRY + (13,), rfc1902.Counter32),
    "ifInErrors": (IF_ENTRY + (14,), rfc1902.Counter32),
    "ifOutOctets": (IF_ENTRY + (16,), rfc1902.Counter32),
    "ifOutUcastPkts": (IF_ENTRY + (17,), rfc1902.Counter32),
    "ifOutDiscards": (IF_ENTRY + (19,), rfc1902.Counter32),
    "ifOutErrors": (IF_ENTRY + (20,), rfc1902.Counter32),
    "ifName": (IFX_ENTRY + (1,), rfc1902.OctetString),
    "ifHCInOctets": (IFX_ENTRY + (6,), rfc1902.Counter64),
    "ifHCInUcastPkts": (IFX_ENTRY + (7,), rfc1902.Counter64),
    "ifHCOutOctets": (IFX_ENTRY + (10,), rfc1902.Counter64),
    "ifHCOutUcastPkts": (IFX_ENTRY + (11,), rfc1902.Counter64),
    "ifHighSpeed": (IFX_ENTRY + (15,), rfc1902.Gauge32),
    "ifAlias": (IFX_ENTRY + (18,), rfc1902.OctetString),
}


def if_mib(sys_name: str, uptime_ticks: int, interfaces: Sequence[Mapping[str, object]]) -> dict[Oid, object]:
    """SNMPv2-MIB system group and IF-MIB rows (each a mapping of column name -> value; ``ifIndex`` required)."""
    mib: dict[Oid, object] = {
        SYS + (1, 0): rfc1902.OctetString(f"wanmon lab WAN emulator {sys_name}"),
        SYS + (2, 0): rfc1902.ObjectIdentifier((1, 3, 6, 1, 4, 1, 8072, 3, 2, 10)),
        SYS + (3, 0): rfc1902.TimeTicks(uptime_ticks % 2**32),
        SYS + (5, 0): rfc1902.OctetString(sys_name),
        (1, 3, 6, 1, 2, 1, 2, 1, 0): rfc1902.Integer32(len(interfaces)),
    }
    for row in interfaces:
        index = int(row["ifIndex"])  # type: ignore[call-overload]
        for column, value in row.items():
            oid, kind = IF_COLUMNS[column]
            if kind in (rfc1902.Counter32, rfc1902.Gauge32):
                value = int(value) % 2**32  # type: ignore[call-overload]
            elif kind is rfc1902.Counter64:
                value = int(value) % 2**64  # type: ignore[call-overload]
            mib[oid + (index,)] = kind(value)
    return mib


def answer(message: bytes, community: str, mib: Mib) -> bytes | None:
    """The response to one request datagram, or None (not v2c, wrong community, undecodable)."""
    try:
        version = int(api.decodeMessageVersion(message))
        module = api.PROTOCOL_MODULES[version]
        request, _ = decoder.decode(message, asn1Spec=module.Message())
    except Exception:  # noqa: BLE001 - anything undecodable is dropped, as a router does
        return None
    if version != api.SNMP_VERSION_2C or str(module.apiMessage.get_community(request)) != community:
        return None  # v2c only: what the agent speaks here
    response = module.apiMessage.get_response(request)
    request_pdu = module.apiMessage.get_pdu(request)
    response_pdu = module.apiMessage.get_pdu(response)
    values = mib()
    oids = sorted(values)
    asked = [tuple(oid) for oid, _ in module.apiPDU.get_varbinds(request_pdu)]
    end = rfc1905.endOfMibView
    out: list[tuple[Oid, object]] = []
    if request_pdu.isSameTypeWith(module.GetRequestPDU()):
        for oid in asked:
            out.append((oid, values.get(oid, rfc1905.noSuchInstance)))
    elif request_pdu.isSameTypeWith(module.GetNextRequestPDU()):
        out = [_next(oids, values, oid, end) for oid in asked]
    elif request_pdu.isSameTypeWith(module.GetBulkRequestPDU()):
        non_repeaters = int(module.apiBulkPDU.get_non_repeaters(request_pdu))
        repetitions = min(int(module.apiBulkPDU.get_max_repetitions(request_pdu)), 200)
        out = [_next(oids, values, oid, end) for oid in asked[:non_repeaters]]
        cursor = asked[non_repeaters:]
        for _ in range(repetitions):
            row = [_next(oids, values, oid, end) for oid in cursor]
            out += row
            cursor = [oid for oid, _ in row]
            if all(value is end for _, value in row):
                break
    else:
        return None
    module.apiPDU.set_varbinds(response_pdu, out)
    return encoder.encode(response)


def _next(oids: list[Oid], values: Mapping[Oid, object], oid: Oid, end: object) -> tuple[Oid, object]:
    at = bisect.bisect_right(oids, oid)
    if at >= len(oids):
        return oid, end
    return oids[at], values[oids[at]]


class Responder:
    """Answers on already bound UDP sockets (one per namespace) from a thread of its own until ``stop()``."""

    def __init__(self, sockets: Sequence[socket.socket], community: str, mib: Mib) -> None:
        self.sockets = list(sockets)
        self.community = community
        self.mib = mib
        self.requests = 0
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="snmp", daemon=True)

    def start(self) -> Responder:
        self._thread.start()
        return self

    def _serve(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select(self.sockets, [], [], 0.2)
            for sock in ready:
                try:
                    data, peer = sock.recvfrom(65535)
                except OSError:
                    continue
                try:
                    reply = answer(data, self.community, self.mib)
                except Exception:  # noqa: BLE001 - one bad request must not stop the router answering
                    self.errors += 1
                    continue
                if reply is not None:
                    self.requests += 1
                    sock.sendto(reply, peer)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for sock in self.sockets:
            sock.close()

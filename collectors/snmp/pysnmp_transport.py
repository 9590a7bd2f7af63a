"""The pysnmp half of the SNMP collector: :class:`SnmpPoller` and the transport it gives each device.

The only module that imports pysnmp, and only when a poller first talks to a device (the
pure half works without pysnmp installed). Known pysnmp 7 traps handled here: see the
``collectors.snmp`` package docstring.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time as _time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from collectors.snmp.oids import (
    DEFAULT_MAX_CONCURRENT_DEVICES,
    ERROR_AUTH,
    ERROR_INTERNAL,
    ERROR_PROTOCOL,
    ERROR_RESOLVE,
    ERROR_RESPONSE,
    ERROR_TIMEOUT,
    MAX_WALK_ROWS,
    SnmpError,
    SnmpTransport,
    SnmpValue,
)
from collectors.snmp.poll import DevicePoll, WarningMemory, failed_poll, poll_with_transport
from collectors.snmp_config import SnmpDeviceConfig

if TYPE_CHECKING:
    from pysnmp.hlapi.v3arch.asyncio import SnmpEngine

__all__ = ["SnmpPoller", "TransportFactory", "poll_device", "poll_devices"]

# The package's name: operators filter the agent's logs on it, wherever the code sits.
logger = logging.getLogger("collectors.snmp")

# pysnmp error indications (pysnmp.proto.errind class names) that mean "credentials".
_AUTH_INDICATIONS: Final = frozenset(
    {
        "UnknownUserName",
        "WrongDigest",
        "DecryptionError",
        "EncryptionError",
        "AuthenticationError",
        "AuthenticationFailure",
        "UnsupportedSecurityLevel",
        "UnsupportedAuthProtocol",
        "UnsupportedPrivProtocol",
        "UnknownSecurityName",
        "NoAuthentication",
        "NoEncryption",
    }
)


TransportFactory = Callable[[SnmpDeviceConfig], Awaitable[SnmpTransport]]


def _hlapi() -> Any:
    # Imported on first use: the pure half of this module works without pysnmp installed.
    import pysnmp.hlapi.v3arch.asyncio as hlapi

    return hlapi


def _plain(value: Any) -> SnmpValue:
    """A pysnmp/pyasn1 value as a plain Python value (see SnmpValue)."""
    from pyasn1.type import univ

    if isinstance(value, univ.Null):  # noSuchObject, noSuchInstance, endOfMibView subclass Null
        return None
    if isinstance(value, univ.Integer):  # Integer32, Counter32/64, Gauge32, TimeTicks, Unsigned32
        return int(value)
    if isinstance(value, univ.OctetString):  # also IpAddress, Opaque, Bits
        return bytes(value.asOctets())
    if isinstance(value, univ.ObjectIdentifier):
        return str(value)
    return str(value.prettyPrint())


def _indication_error(indication: Any, config: SnmpDeviceConfig, what: str) -> SnmpError:
    name = type(indication).__name__
    text = str(indication)
    if name == "RequestTimedOut":
        hint = "host down, UDP port filtered" + (" or wrong community" if config.version == "2c" else "")
        return SnmpError(
            ERROR_TIMEOUT,
            f"no response to {what} within {config.timeout_s:g} s x {config.retries + 1} tries ({hint})",
        )
    if name in _AUTH_INDICATIONS:
        return SnmpError(ERROR_AUTH, f"{what}: {text} (check the SNMPv3 user, protocols and keys)")
    return SnmpError(ERROR_PROTOCOL, f"{what}: {name}: {text}")


def _status_error(status: Any, index: Any, var_binds: Sequence[Any], what: str) -> SnmpError:
    position = int(index or 0)
    subject = str(var_binds[position - 1][0]) if 0 < position <= len(var_binds) else what
    label = status.prettyPrint() if hasattr(status, "prettyPrint") else str(status)
    return SnmpError(ERROR_RESPONSE, f"agent answered {label} for {subject}")


class _PysnmpTransport:
    """:class:`SnmpTransport` for one device on a shared pysnmp engine."""

    def __init__(self, engine: SnmpEngine, config: SnmpDeviceConfig, target: Any) -> None:
        hlapi = _hlapi()
        self._hlapi = hlapi
        self._engine = engine
        self._config = config
        self._target = target
        self._auth = _auth_data(config)
        # SNMPv3 selects the MIB view by context name; v2c has none (the community selects it).
        self._context = hlapi.ContextData(contextName=config.context_name or "")

    async def get(self, oids: Sequence[str]) -> dict[str, SnmpValue]:
        hlapi = self._hlapi
        indication, status, index, var_binds = await hlapi.get_cmd(
            self._engine,
            self._auth,
            self._target,
            self._context,
            *(hlapi.ObjectType(hlapi.ObjectIdentity(oid)) for oid in oids),
            lookupMib=False,
        )
        what = "GET " + ", ".join(oids)
        if indication:
            raise _indication_error(indication, self._config, what)
        if status:
            raise _status_error(status, index, var_binds, what)
        return {str(name): _plain(value) for name, value in var_binds}

    async def bulk_walk(self, oid: str) -> dict[str, SnmpValue]:
        hlapi = self._hlapi
        rows: dict[str, SnmpValue] = {}
        walker = hlapi.bulk_walk_cmd(
            self._engine,
            self._auth,
            self._target,
            self._context,
            0,
            self._config.max_repetitions,
            hlapi.ObjectType(hlapi.ObjectIdentity(oid)),
            lookupMib=False,
            lexicographicMode=False,
        )
        what = f"GETBULK walk of {oid}"
        async with aclosing(walker):
            async for indication, status, index, var_binds in walker:
                if indication:
                    # bulk_walk_cmd yields a timeout and then retries it forever: stop here.
                    raise _indication_error(indication, self._config, what)
                if status:
                    raise _status_error(status, index, var_binds, what)
                for name, value in var_binds:
                    rows[str(name)] = _plain(value)
                if len(rows) > MAX_WALK_ROWS:
                    raise SnmpError(ERROR_PROTOCOL, f"{what}: more than {MAX_WALK_ROWS} rows; the agent loops")
        return rows


_AUTH_CONSTANTS: Final = {
    "MD5": "usmHMACMD5AuthProtocol",
    "SHA": "usmHMACSHAAuthProtocol",
    "SHA224": "usmHMAC128SHA224AuthProtocol",
    "SHA256": "usmHMAC192SHA256AuthProtocol",
    "SHA384": "usmHMAC256SHA384AuthProtocol",
    "SHA512": "usmHMAC384SHA512AuthProtocol",
}
_PRIV_CONSTANTS: Final = {
    "DES": "usmDESPrivProtocol",
    "3DES": "usm3DESEDEPrivProtocol",
    "AES": "usmAesCfb128Protocol",
    "AES128": "usmAesCfb128Protocol",
    "AES192": "usmAesCfb192Protocol",
    "AES256": "usmAesCfb256Protocol",
    "AES192C": "usmAesCfb192Protocol",
    "AES256C": "usmAesCfb256Protocol",
    "AES192-BLUMENTHAL": "usmAesBlumenthalCfb192Protocol",
    "AES256-BLUMENTHAL": "usmAesBlumenthalCfb256Protocol",
}


def _auth_data(config: SnmpDeviceConfig) -> Any:
    hlapi = _hlapi()
    if config.version == "2c":
        return hlapi.CommunityData(config.community, mpModel=1)
    auth_protocol = getattr(hlapi, _AUTH_CONSTANTS[config.auth_protocol]) if config.auth_key else None
    priv_protocol = getattr(hlapi, _PRIV_CONSTANTS[config.priv_protocol]) if config.priv_key else None
    return hlapi.UsmUserData(
        config.user,
        authKey=config.auth_key,
        privKey=config.priv_key,
        authProtocol=auth_protocol,
        privProtocol=priv_protocol,
    )


def _credentials(config: SnmpDeviceConfig) -> tuple[Any, ...]:
    return (config.auth_protocol, config.auth_key, config.priv_protocol, config.priv_key)


@dataclass
class _EngineSlot:
    engine: Any
    users: dict[str, tuple[Any, ...]] = field(default_factory=dict)


class SnmpPoller:
    """Polls devices with pysnmp: one SnmpEngine (one UDP socket) per event loop for all devices.

    Use as ``async with SnmpPoller() as poller: polls = await poller.poll_devices(configs)``,
    and keep it for the agent's lifetime (creating an engine costs ~0.3 s of CPU). A poller is
    bound to the event loop it first runs on. At most ``max_concurrent_devices`` devices are
    polled at once; each device's deadline counts from the start of its own poll. A kind of
    warning is reported once per device for the poller's lifetime (:class:`WarningMemory`).
    ``transport_factory`` replaces pysnmp (tests).
    """

    def __init__(
        self,
        *,
        max_concurrent_devices: int = DEFAULT_MAX_CONCURRENT_DEVICES,
        transport_factory: TransportFactory | None = None,
    ) -> None:
        if max_concurrent_devices < 1:
            raise ValueError("max_concurrent_devices must be >= 1")
        self._max_concurrent_devices = max_concurrent_devices
        self._transport_factory = transport_factory or self._pysnmp_transport
        self._slots: list[_EngineSlot] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._memory = WarningMemory()

    async def __aenter__(self) -> SnmpPoller:
        self._bind_loop()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the engines' sockets. The poller cannot be used afterwards."""
        self._closed = True
        for slot in self._slots:
            slot.engine.close_dispatcher()
        self._slots.clear()

    async def poll_device(self, config: SnmpDeviceConfig, *, now: datetime | None = None) -> DevicePoll:
        """Poll one device; never raises for device or network failures (see DevicePoll.error)."""
        self._bind_loop()
        started = _time.monotonic()
        start_time = datetime.now(UTC)
        try:
            async with asyncio.timeout(config.effective_deadline_s):
                transport = await self._transport_factory(config)
        except TimeoutError:
            return failed_poll(config, start_time, started, ERROR_RESOLVE, f"resolving {config.host!r} timed out")
        except SnmpError as exc:
            return failed_poll(config, start_time, started, exc.kind, exc.message)
        except Exception as exc:  # a bad device entry must not abort the cycle
            return failed_poll(config, start_time, started, ERROR_INTERNAL, f"{type(exc).__name__}: {exc}")
        poll = await poll_with_transport(transport, config, now=now, started=started, memory=self._memory)
        for message in poll.repeated:
            logger.debug(
                "SNMP poll warning (already reported for this device)",
                extra={"equipment": config.equipment, "warning": message},
            )
        return poll

    async def poll_devices(
        self, configs: Iterable[SnmpDeviceConfig], *, now: datetime | None = None
    ) -> list[DevicePoll]:
        """Poll all devices concurrently; results in the order of ``configs``."""
        self._bind_loop()
        limit = asyncio.Semaphore(self._max_concurrent_devices)

        async def one(config: SnmpDeviceConfig) -> DevicePoll:
            async with limit:
                return await self.poll_device(config, now=now)

        return list(await asyncio.gather(*(one(config) for config in configs)))

    def _bind_loop(self) -> None:
        if self._closed:
            raise RuntimeError("this SnmpPoller is closed")
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError(
                "an SnmpPoller (its pysnmp SnmpEngine) belongs to the event loop it first ran on; "
                "create one poller per event loop"
            )

    def _engine_for(self, config: SnmpDeviceConfig) -> Any:
        # pysnmp keys USM users by user name within an engine: a second device with the same user
        # name but other keys would replace the first one's keys mid-poll. Such devices get their
        # own engine; everything else shares the first.
        for slot in self._slots:
            if config.version != "3":
                return slot.engine
            known = slot.users.get(config.user or "")
            if known is None or known == _credentials(config):
                slot.users[config.user or ""] = _credentials(config)
                return slot.engine
        slot = _EngineSlot(engine=_hlapi().SnmpEngine())
        if config.version == "3":
            slot.users[config.user or ""] = _credentials(config)
        self._slots.append(slot)
        return slot.engine

    async def _pysnmp_transport(self, config: SnmpDeviceConfig) -> SnmpTransport:
        hlapi = _hlapi()
        target_class = hlapi.Udp6TransportTarget if _is_ipv6(config.host) else hlapi.UdpTransportTarget
        from pysnmp.error import PySnmpError

        try:
            target = await target_class.create(
                (config.host, config.port), timeout=config.timeout_s, retries=config.retries
            )
        except PySnmpError as exc:
            raise SnmpError(ERROR_RESOLVE, f"cannot resolve {config.host!r}: {exc}") from None
        return _PysnmpTransport(self._engine_for(config), config, target)


def _is_ipv6(host: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(host.strip("[]")), ipaddress.IPv6Address)
    except ValueError:
        return False  # a name: polled over IPv4 (UdpTransportTarget resolves A records)


async def poll_device(
    config: SnmpDeviceConfig, now: datetime | None = None, *, poller: SnmpPoller | None = None
) -> DevicePoll:
    """Poll one device (with ``poller``, or a temporary one closed afterwards)."""
    if poller is not None:
        return await poller.poll_device(config, now=now)
    async with SnmpPoller() as temporary:
        return await temporary.poll_device(config, now=now)


async def poll_devices(
    configs: Iterable[SnmpDeviceConfig], now: datetime | None = None, *, poller: SnmpPoller | None = None
) -> list[DevicePoll]:
    """Poll devices concurrently on one engine (with ``poller``, or a temporary one)."""
    if poller is not None:
        return await poller.poll_devices(configs, now=now)
    async with SnmpPoller() as temporary:
        return await temporary.poll_devices(configs, now=now)

"""The ``[[snmp]]`` table of the agent configuration: :class:`SnmpDeviceConfig`, its only definition.

The agent's TOML loader (``agents.config``) builds this class directly from each ``[[snmp]]``
table (type and range checks from the field hints and metadata, cross-field rules here), and
``collectors.snmp`` polls with it. It lives in its own module, free of pysnmp and of the poller,
so that the configuration can be validated on an install where the SNMP collector is unusable.

Interface selection (docs/agent.md):

* ``interfaces``: exact interface names; only these (and the ones ``if_index_names`` names)
  are reported. It cannot be combined with the filters below;
* otherwise every interface that passes all the filters: ``include`` / ``exclude`` (fnmatch
  globs on the interface name, case-sensitive), ``if_types`` (IANAifType names such as
  ``ethernetCsmacd``, ``ieee8023adLag``, or numbers), ``admin_status`` (``up``, ``down``,
  ``testing``) and ``require_octet_counters`` (default true: an interface without any octet
  counter -- loopbacks, tunnels, optical controllers -- has no traffic to report). Interfaces
  that ``if_index_names`` names are always reported.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal

from collectors.table import TableConfig, field_meta

__all__ = [
    "ADMIN_STATUS",
    "AUTH_PROTOCOLS",
    "IF_TYPES",
    "PRIV_PROTOCOLS",
    "VERSIONS",
    "SnmpConfigError",
    "SnmpDeviceConfig",
    "if_type_label",
]

VERSIONS: Final = ("2c", "3")
AuthProtocol = Literal["MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512"]
# AES192/AES256 use Reeder key extension (what Cisco implements; net-snmp calls it AES192C/
# AES256C); the -BLUMENTHAL variants are net-snmp's AES192/AES256.
PrivProtocol = Literal[
    "DES", "3DES", "AES", "AES128", "AES192", "AES256", "AES192C", "AES256C", "AES192-BLUMENTHAL", "AES256-BLUMENTHAL"
]
AUTH_PROTOCOLS: Final = ("MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512")
PRIV_PROTOCOLS: Final = (
    "DES",
    "3DES",
    "AES",
    "AES128",
    "AES192",
    "AES256",
    "AES192C",
    "AES256C",
    "AES192-BLUMENTHAL",
    "AES256-BLUMENTHAL",
)
MIN_KEY_CHARS: Final = 8  # RFC 3414 section 11.2: USM pass phrases are at least 8 characters

DEFAULT_PORT: Final = 161
DEFAULT_TIMEOUT_S: Final = 2.0
DEFAULT_RETRIES: Final = 1
DEFAULT_MAX_REPETITIONS: Final = 25
DEFAULT_MAX_PARALLEL_REQUESTS: Final = 8
MIN_DEFAULT_DEADLINE_S: Final = 20.0
MAX_INTERVAL_S: Final = 7 * 86400.0  # the wire schema's bound on schedule intervals
IF_INDEX_MAX: Final = 2**31 - 1

ADMIN_STATUS: Final[Mapping[int, str]] = {1: "up", 2: "down", 3: "testing"}

# IANAifType-MIB (IANA registry, revision 2017-03-30) in number order from 1; "-" is unassigned.
_IANA_IF_TYPE_NAMES: Final = """
    other regular1822 hdh1822 ddnX25 rfc877x25 ethernetCsmacd iso88023Csmacd iso88024TokenBus iso88025TokenRing
    iso88026Man starLan proteon10Mbit proteon80Mbit hyperchannel fddi lapb sdlc ds1 e1 basicISDN primaryISDN
    propPointToPointSerial ppp softwareLoopback eon ethernet3Mbit nsip slip ultra ds3 sip frameRelay rs232 para
    arcnet arcnetPlus atm miox25 sonet x25ple iso88022llc localTalk smdsDxi frameRelayService v35 hssi hippi
    modem aal5 sonetPath sonetVT smdsIcip propVirtual propMultiplexor ieee80212 fibreChannel hippiInterface
    frameRelayInterconnect aflane8023 aflane8025 cctEmul fastEther isdn v11 v36 g703at64k g703at2mb qllc
    fastEtherFX channel ieee80211 ibm370parChan escon dlsw isdns isdnu lapd ipSwitch rsrb atmLogical ds0
    ds0Bundle bsc async cnr iso88025Dtr eplrs arap propCnls hostPad termPad frameRelayMPI x213 adsl radsl sdsl
    vdsl iso88025CRFPInt myrinet voiceEM voiceFXO voiceFXS voiceEncap voiceOverIp atmDxi atmFuni atmIma
    pppMultilinkBundle ipOverCdlc ipOverClaw stackToStack virtualIpAddress mpc ipOverAtm iso88025Fiber tdlc
    gigabitEthernet hdlc lapf v37 x25mlp x25huntGroup transpHdlc interleave fast ip docsCableMaclayer
    docsCableDownstream docsCableUpstream a12MppSwitch tunnel coffee ces atmSubInterface l2vlan l3ipvlan
    l3ipxvlan digitalPowerline mediaMailOverIp dtm dcn ipForward msdsl ieee1394 if-gsn dvbRccMacLayer
    dvbRccDownstream dvbRccUpstream atmVirtual mplsTunnel srp voiceOverAtm voiceOverFrameRelay idsl
    compositeLink ss7SigLink propWirelessP2P frForward rfc1483 usb ieee8023adLag bgppolicyaccounting
    frf16MfrBundle h323Gatekeeper h323Proxy mpls mfSigLink hdsl2 shdsl ds1FDL pos dvbAsiIn dvbAsiOut plc nfas
    tr008 gr303RDT gr303IDT isup propDocsWirelessMaclayer propDocsWirelessDownstream propDocsWirelessUpstream
    hiperlan2 propBWAp2Mp sonetOverheadChannel digitalWrapperOverheadChannel aal2 radioMAC atmRadio imt mvl
    reachDSL frDlciEndPt atmVciEndPt opticalChannel opticalTransport propAtm voiceOverCable infiniband teLink
    q2931 virtualTg sipTg sipSig docsCableUpstreamChannel econet pon155 pon622 bridge linegroup voiceEMFGD
    voiceFGDEANA voiceDID mpegTransport sixToFour gtp pdnEtherLoop1 pdnEtherLoop2 opticalChannelGroup homepna
    gfp ciscoISLvlan actelisMetaLOOP fcipLink rpr qam lmp cblVectaStar docsCableMCmtsDownstream adsl2
    macSecControlledIF macSecUncontrolledIF aviciOpticalEther atmbond voiceFGDOS mocaVersion1 ieee80216WMAN
    adsl2plus dvbRcsMacLayer dvbTdm dvbRcsTdma x86Laps wwanPP wwanPP2 voiceEBS ifPwType ilan pip aluELP gpon
    vdsl2 capwapDot11Profile capwapDot11Bss capwapWtpVirtualRadio bits docsCableUpstreamRfPort
    cableDownstreamRfPort vmwareVirtualNic ieee802154 otnOdu otnOtu ifVfiType g9981 g9982 g9983 aluEpon
    aluEponOnu aluEponPhysicalUni aluEponLogicalLink aluGponOnu aluGponPhysicalUni vmwareNicTeam - - - -
    docsOfdmDownstream docsOfdmaUpstream gfast sdci xboxWireless fastdsl docsCableScte55d1FwdOob
    docsCableScte55d1RetOob docsCableScte55d2DsOob docsCableScte55d2UsOob docsCableNdf docsCableNdr ptm ghn
"""
IF_TYPES: Final[Mapping[str, int]] = {
    name: number for number, name in enumerate(_IANA_IF_TYPE_NAMES.split(), start=1) if name != "-"
}
"""IANAifType name -> ifType number."""
_IF_TYPE_BY_LOWER: Final = {name.lower(): number for name, number in IF_TYPES.items()}
_IF_TYPE_LABELS: Final = {number: name for name, number in IF_TYPES.items()}

# What records.SnmpRecord accepts for ``equipment`` and ``host``.
_EQUIPMENT_NAME: Final = re.compile(r"[^\s:\x00-\x1f\x7f]{1,128}")
_HOST: Final = re.compile(r"[^\s\x00-\x1f\x7f]{1,255}")
_FILTER_KEYS: Final = ("include", "exclude", "if_types", "admin_status")


def if_type_label(number: int) -> str:
    """``ethernetCsmacd(6)`` for 6; ``ifType 999`` for a number IANA has not assigned (here)."""
    name = _IF_TYPE_LABELS.get(number)
    return f"{name}({number})" if name else f"ifType {number}"


class SnmpConfigError(ValueError):
    """An ``[[snmp]]`` table is unusable. ``problems`` holds (key, message) pairs, key "" for the table."""

    def __init__(self, equipment: str, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        text = "; ".join(f"{key}: {message}" if key else message for key, message in problems)
        super().__init__(f"snmp {equipment or '?'}: {text}")


@dataclass(frozen=True)
class SnmpDeviceConfig(TableConfig):
    """One ``[[snmp]]`` block of the agent configuration (docs/agent.md).

    ``equipment`` is the inventory's equipment name, ``host`` the address polled. v2c needs
    ``community``; v3 needs ``user`` and, for authNoPriv/authPriv, ``auth_key`` (and
    ``priv_key``); ``context_name`` selects an SNMPv3 context (usually empty).

    Timing: each request waits ``timeout_s`` for an answer and is sent ``retries`` more times;
    the whole poll (all requests) must finish within ``deadline_s`` (default
    ``max(20 s, 4 x timeout_s x (retries + 1))``), else the device fails with ERROR_DEADLINE.
    ``interval_s`` is the scheduling period (the agent's scheduler; None outside the agent).

    Selection (module docstring): ``interfaces`` (exact names) or the filters ``include``,
    ``exclude``, ``if_types``, ``admin_status`` and ``require_octet_counters``.
    ``if_index_names`` names interfaces by ifIndex (the inventory's name where it differs from
    ifName); those interfaces are always reported. ``if_types`` is kept as ifType numbers.
    Secrets are left out of ``repr()``.
    """

    TABLE: ClassVar[str] = "snmp"

    equipment: str
    host: str
    port: int = field(default=DEFAULT_PORT, metadata=field_meta(ge=1, le=65535))
    version: str = "2c"
    community: str | None = field(default=None, repr=False, metadata=field_meta(secret=True))
    user: str | None = None
    auth_protocol: AuthProtocol = "SHA"
    auth_key: str | None = field(default=None, repr=False, metadata=field_meta(secret=True))
    priv_protocol: PrivProtocol = "AES"
    priv_key: str | None = field(default=None, repr=False, metadata=field_meta(secret=True))
    context_name: str = ""
    timeout_s: float = field(default=DEFAULT_TIMEOUT_S, metadata=field_meta(gt=0, le=600))  # per request
    retries: int = field(default=DEFAULT_RETRIES, metadata=field_meta(ge=0, le=10))
    deadline_s: float | None = field(default=None, metadata=field_meta(gt=0, le=3600))  # whole poll
    max_repetitions: int = field(default=DEFAULT_MAX_REPETITIONS, metadata=field_meta(ge=1, le=1000))
    max_parallel_requests: int = field(default=DEFAULT_MAX_PARALLEL_REQUESTS, metadata=field_meta(ge=1, le=64))
    interfaces: tuple[str, ...] | None = None
    if_index_names: Mapping[int, str] | None = None
    include: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    if_types: tuple[str | int, ...] | None = None
    admin_status: tuple[Literal["up", "down", "testing"], ...] | None = None
    require_octet_counters: bool = True
    interval_s: float | None = field(default=None, metadata=field_meta(ge=1, le=MAX_INTERVAL_S))

    def __post_init__(self) -> None:
        problems: list[tuple[str, str]] = []
        version = str(self.version)
        if version == "v3":
            version = "3"
        if version in ("v2c", "2"):
            version = "2c"
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "auth_protocol", str(self.auth_protocol).upper())
        object.__setattr__(self, "priv_protocol", str(self.priv_protocol).upper())
        for key in ("interfaces", "include", "exclude"):
            value = getattr(self, key)
            if value is None:
                continue
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                problems.append((key, "must be a list of names, not a string"))
                object.__setattr__(self, key, None)
            else:
                object.__setattr__(self, key, tuple(value))
        if self.if_index_names is not None:
            names, problem = _if_index_names(self.if_index_names)
            object.__setattr__(self, "if_index_names", names)
            if problem:
                problems.append(("if_index_names", problem))
        if self.if_types is not None:
            numbers, problem = _if_types(self.if_types)
            object.__setattr__(self, "if_types", numbers)
            if problem:
                problems.append(("if_types", problem))
        if self.admin_status is not None:
            given = [self.admin_status] if isinstance(self.admin_status, str) else self.admin_status
            labels = tuple(str(v).lower() for v in given)
            object.__setattr__(self, "admin_status", labels)
            unknown = [v for v in labels if v not in ADMIN_STATUS.values()]
            if unknown:
                problems.append(("admin_status", f"{unknown[0]!r} is not an ifAdminStatus (up, down, testing)"))
        problems += list(self._problems())
        if problems:
            raise SnmpConfigError(self.equipment, problems)

    def _problems(self) -> Iterable[tuple[str, str]]:
        if not _EQUIPMENT_NAME.fullmatch(self.equipment or ""):
            yield "equipment", f"{self.equipment!r} is not an inventory equipment name (no spaces or ':')"
        if not _HOST.fullmatch(self.host or ""):
            yield "host", f"{self.host!r} is not a host name or address"
        if not 1 <= self.port <= 65535:
            yield "port", f"{self.port} is not a UDP port"
        if self.version not in VERSIONS:
            yield "version", f"must be one of {VERSIONS}, got {self.version!r}"
        if self.version == "2c" and not self.community:
            yield "community", 'required with version "2c"'
        if self.version == "3":
            yield from self._v3_problems()
        if not (self.timeout_s > 0 and math.isfinite(self.timeout_s)):
            yield "timeout_s", "must be > 0"
        if self.retries < 0:
            yield "retries", "must be >= 0"
        if self.deadline_s is not None and not self.deadline_s >= self.request_budget_s:
            yield (
                "deadline_s",
                f"{self.deadline_s} is shorter than one request with its retries "
                f"(timeout_s {self.timeout_s} x {self.retries + 1} = {self.request_budget_s} s)",
            )
        if not 1 <= self.max_repetitions <= 1000:
            yield "max_repetitions", "must be within 1..1000"
        if self.max_parallel_requests < 1:
            yield "max_parallel_requests", "must be >= 1"
        if self.interfaces is not None:
            combined = [key for key in _FILTER_KEYS if getattr(self, key) is not None]
            if combined:
                yield (
                    "interfaces",
                    f"lists the interfaces exactly and cannot be combined with {', '.join(combined)} "
                    "(use either the list or the filters)",
                )

    def _v3_problems(self) -> Iterable[tuple[str, str]]:
        if not self.user:
            yield "user", 'required with version "3"'
        if self.auth_protocol not in AUTH_PROTOCOLS:
            yield "auth_protocol", f"must be one of {AUTH_PROTOCOLS}, got {self.auth_protocol!r}"
        if self.priv_protocol not in PRIV_PROTOCOLS:
            yield "priv_protocol", f"must be one of {PRIV_PROTOCOLS}, got {self.priv_protocol!r}"
        if self.priv_key is not None and self.auth_key is None:
            yield "priv_key", "privacy (encryption) needs authentication: set auth_key"
        for name in ("auth_key", "priv_key"):
            key = getattr(self, name)
            if key is not None and len(key) < MIN_KEY_CHARS:
                yield name, f"must be at least {MIN_KEY_CHARS} characters (RFC 3414)"

    @property
    def security_level(self) -> str:
        """The SNMPv3 security level the keys give (``noAuthNoPriv``, ``authNoPriv``, ``authPriv``)."""
        if self.auth_key is None:
            return "noAuthNoPriv"
        return "authPriv" if self.priv_key is not None else "authNoPriv"

    @property
    def request_budget_s(self) -> float:
        """Longest wait for one request: its timeout times the number of tries."""
        return self.timeout_s * (self.retries + 1)

    @property
    def effective_deadline_s(self) -> float:
        """``deadline_s``, or the default derived from the request timing."""
        if self.deadline_s is not None:
            return self.deadline_s
        return max(MIN_DEFAULT_DEADLINE_S, 4 * self.request_budget_s)


def _if_index_names(value: Any) -> tuple[dict[int, str] | None, str | None]:
    try:
        items = dict(value).items()
    except (TypeError, ValueError):
        return None, "must be a table of ifIndex = name"
    names: dict[int, str] = {}
    bad: list[str] = []
    for key, name in items:
        text = str(key)
        if not (isinstance(key, int) or text.isdigit()) or not 1 <= int(text) <= IF_INDEX_MAX:
            bad.append(text)
            continue
        names[int(text)] = str(name)
    if bad:
        return None, f"keys must be ifIndex numbers (1..2^31-1), got {bad}"
    seen: dict[str, int] = {}
    for index, name in sorted(names.items()):
        if name in seen:
            return None, f"ifIndex {seen[name]} and {index} are both named {name!r}; names must be unique"
        seen[name] = index
    return names, None


def _if_types(value: Any) -> tuple[tuple[int, ...] | None, str | None]:
    entries = [value] if isinstance(value, str | int) else list(value)
    numbers: list[int] = []
    for entry in entries:
        if isinstance(entry, bool):
            return None, f"{entry!r} is not an ifType"
        if isinstance(entry, int) or (isinstance(entry, str) and entry.isdigit()):
            number = int(entry)
            if not 1 <= number <= IF_INDEX_MAX:
                return None, f"{number} is not an ifType number (1..2^31-1)"
            numbers.append(number)
            continue
        number = _IF_TYPE_BY_LOWER.get(str(entry).lower())
        if number is None:
            close = difflib.get_close_matches(str(entry), list(IF_TYPES), n=1, cutoff=0.6)
            hint = f' (did you mean "{close[0]}"?)' if close else " (IANAifType-MIB names, or numbers)"
            return None, f"unknown ifType {entry!r}{hint}"
        numbers.append(number)
    return tuple(dict.fromkeys(numbers)), None

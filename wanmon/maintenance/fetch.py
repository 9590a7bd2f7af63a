"""Fetching a carrier's calendar over HTTP(S) without letting a URL reach inside the network.

A calendar URL comes from an operator or from a carrier's source record, and the fetch runs on the
centre, next to the database, Redis and the cloud's metadata service. So:

- only http and https; the host is resolved here and every address it resolves to must be global
  (no private, loopback, link-local, multicast, reserved or unspecified address) unless it lies in a
  network of ``WANMON_FETCH_ALLOW_NETS`` (e.g. a carrier portal reached over a private link, or
  127.0.0.1 in the tests); the connection goes to the address checked (a second DNS answer cannot
  swap it);
- redirects are followed by hand, each hop checked the same way, at most ``URL_MAX_REDIRECTS``;
- one deadline for the whole fetch (``URL_TIMEOUT_S``), and at most ``URL_MAX_BYTES`` read;
- errors name the URL and the reason, never the body.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from django.conf import settings

from wanmon.maintenance import constants

__all__ = ["FetchRefused", "Fetched", "fetch_allow_nets", "url_fetch", "url_redacted"]

REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK_BYTES = 64 * 1024


class FetchRefused(ValueError):
    """The URL may not be fetched, or fetching it failed; the message names the URL and why."""


@dataclass(frozen=True)
class Fetched:
    """A fetched body, its content type and the URL it finally came from."""

    body: bytes
    content_type: str
    url: str


def url_redacted(url: str) -> str:
    """``url`` without what may be a secret: the user part and the query (a token) are replaced by [hidden]."""
    try:
        parts = urlsplit(url or "")
    except ValueError:
        return "[hidden]"
    if not parts.scheme or not parts.netloc:
        return url or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = ("[hidden]@" if parts.username or parts.password else "") + host
    try:
        netloc += f":{parts.port}" if parts.port else ""
    except ValueError:
        pass
    query = "?[hidden]" if parts.query else ""
    return f"{parts.scheme}://{netloc}{parts.path}{query}"


def fetch_allow_nets() -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """Networks a fetch may reach although they are not global (setting WANMON_FETCH_ALLOW_NETS)."""
    nets = []
    for text in settings.WANMON_FETCH_ALLOW_NETS or ():
        try:
            nets.append(ipaddress.ip_network(str(text).strip(), strict=False))
        except ValueError:
            continue  # reported by the system check maintenance.E001; here a bad entry allows nothing
    return tuple(nets)


def _address_allowed(address: str, allow_nets) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip in net for net in allow_nets):
        return True
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified)


def _resolve(url: str, host: str, port: int, allow_nets, deadline: float) -> str:
    """The address to connect to: every address of ``host`` must be allowed (a mixed answer is refused)."""
    if time.monotonic() >= deadline:
        raise FetchRefused(f"{url}: no answer within {constants.URL_TIMEOUT_S:g} s")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchRefused(f"{url}: cannot resolve {host}: {exc}") from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    refused = [a for a in addresses if not _address_allowed(a, allow_nets)]
    if refused or not addresses:
        raise FetchRefused(
            f"{url}: {host} resolves to {', '.join(refused) or 'nothing'}, not a public address "
            "(private, loopback, link-local, multicast or reserved); refused (WANMON_FETCH_ALLOW_NETS allows networks)"
        )
    return addresses[0]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the address checked; the Host header still names the host."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """Connects to the address checked; TLS is verified against the host name (SNI and certificate)."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def _remaining(url: str, deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchRefused(f"{url}: no complete answer within {constants.URL_TIMEOUT_S:g} s")
    return left


def _get(url: str, allow_nets, deadline: float, headers: dict[str, str]) -> tuple[int, str, str, bytes]:
    """(status, reason, Location or content type, body) of one request, without following anything."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise FetchRefused(f"{url}: only http:// and https:// URLs can be fetched")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise FetchRefused(f"{url}: invalid port") from None
    host = parts.hostname
    address = _resolve(url, host, port, allow_nets, deadline)
    cls = _PinnedHTTPSConnection if scheme == "https" else _PinnedHTTPConnection
    connection = cls(host, port, address, timeout=_remaining(url, deadline))
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("GET", target, headers=headers)
        response = connection.getresponse()
        if response.status in REDIRECTS:
            return response.status, response.reason, response.getheader("Location") or "", b""
        if response.status != 200:
            return response.status, response.reason, "", b""
        length = response.getheader("Content-Length")
        if length and length.isdigit() and int(length) > constants.URL_MAX_BYTES:
            raise FetchRefused(f"{url}: larger than {constants.URL_MAX_BYTES} bytes")
        body = bytearray()
        while len(body) <= constants.URL_MAX_BYTES:
            _remaining(url, deadline)  # a server dripping bytes does not get around the deadline
            chunk = response.read1(_CHUNK_BYTES)
            if not chunk:
                break
            body += chunk
        if len(body) > constants.URL_MAX_BYTES:
            raise FetchRefused(f"{url}: larger than {constants.URL_MAX_BYTES} bytes")
        return 200, response.reason, response.headers.get_content_type(), bytes(body)
    except TimeoutError:
        raise FetchRefused(f"{url}: no complete answer within {constants.URL_TIMEOUT_S:g} s") from None
    except ssl.SSLError as exc:
        raise FetchRefused(f"{url}: TLS failed: {exc.reason or exc}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise FetchRefused(f"{url}: {exc.__class__.__name__}: {exc}") from None
    finally:
        connection.close()


def url_fetch(url: str, *, accept: str = "*/*") -> Fetched:
    """GET ``url`` under the rules of the module docstring; raises FetchRefused with the reason."""
    allow_nets = fetch_allow_nets()
    deadline = time.monotonic() + constants.URL_TIMEOUT_S
    headers = {"User-Agent": "wanmon-maintenance/1.0", "Accept": accept, "Connection": "close"}
    current = url
    for _ in range(constants.URL_MAX_REDIRECTS + 1):
        status, reason, extra, body = _get(current, allow_nets, deadline, headers)
        if status == 200:
            return Fetched(body=body, content_type=extra, url=current)
        if status in REDIRECTS:
            if not extra:
                raise FetchRefused(f"{current}: HTTP {status} without Location")
            current = urljoin(current, extra)
            continue
        raise FetchRefused(f"{current}: HTTP {status} {reason}")
    raise FetchRefused(f"{url}: more than {constants.URL_MAX_REDIRECTS} redirects")

"""Where webhooks may go: not into the server's own networks unless the operator says so.

A `callback_url` on a loopback, private, link-local, CGNAT, multicast or reserved address is
refused when it is given, and every address is checked again by the resolver of the connection
that delivers (so a name that resolves elsewhere by then gains nothing). ASKBRIDGE_WEBHOOK_ALLOW
names what may be reached all the same. Why: docs/explanation/security.md.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field

from aiohttp.abc import AbstractResolver, ResolveResult

SETTING = "ASKBRIDGE_WEBHOOK_ALLOW"
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_SHARED = ipaddress.ip_network("100.64.0.0/10")
"""Carrier-grade NAT (RFC 6598): neither private nor global, and often a provider's own hosts."""


def address_kind(address: Address) -> str | None:
    """Why webhooks may not go to `address` without the operator's leave (its kind), or None
    for a global unicast address. An IPv4-mapped IPv6 address is judged as its IPv4 address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    kinds = (
        (address.is_unspecified, "unspecified"),
        (address.is_loopback, "loopback"),
        (address.is_link_local, "link-local"),
        (address in _SHARED, "shared (CGNAT)"),
        (address.is_multicast, "multicast"),
        (address.is_private, "private"),
        (address.is_reserved, "reserved"),
        (not address.is_global, "not global"),
    )
    return next((kind for found, kind in kinds if found), None)


def literal(host: str) -> Address | None:
    """`host` as an IP address, when it is one (IPv6 with or without its brackets)."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


class AddressRefused(OSError):
    """A webhook's host is, or resolves to, an address it may not go to; says which and why,
    and names the setting that would allow it."""


@dataclass(frozen=True)
class AllowList:
    """The hosts and networks (ASKBRIDGE_WEBHOOK_ALLOW) webhooks may reach although they are not
    global: a host name allows whatever it resolves to; an address or CIDR allows itself."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = field(default=())

    @classmethod
    def parse(cls, text: str | None) -> AllowList:
        """From a comma-separated list such as `127.0.0.1, receiver.internal, 10.8.0.0/16`;
        ValueError names an entry that is neither."""
        hosts: set[str] = set()
        networks: list[Network] = []
        for entry in (part.strip() for part in (text or "").split(",")):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            name = _host_name(entry)
            if "/" in entry or not name or any(c.isspace() or c in ":@?#" for c in name):
                raise ValueError(
                    f"{entry!r} is neither a host name, an IP address nor a network such as "
                    "10.8.0.0/16"
                )
            hosts.add(name)
        return cls(frozenset(hosts), tuple(networks))

    def allows_host(self, host: str) -> bool:
        return _host_name(host) in self.hosts

    def allows(self, address: Address) -> bool:
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        return any(
            address in net or (mapped is not None and mapped in net) for net in self.networks
        )

    def problem(self, host: str, addresses: Iterable[Address]) -> str | None:
        """Why a webhook may not go to `host` at these addresses, or None when it may."""
        if self.allows_host(host):
            return None
        for address in addresses:
            kind = address_kind(address)
            if kind is not None and not self.allows(address):
                at = "is" if literal(host) == address else f"resolves to {address}, which is"
                return (
                    f"{host} {at} a {kind} address, which webhooks do not go to unless the "
                    f"server's {SETTING} names the host or its network"
                )
        return None


def _host_name(host: str) -> str:
    return host.strip().lower().rstrip(".")


class GuardedResolver(AbstractResolver):
    """A resolver that hands out only addresses webhooks may go to: the connection that sends
    a webhook connects to nothing this did not check. Any refused address refuses the host."""

    def __init__(self, resolver: AbstractResolver, allow: AllowList) -> None:
        self._resolver = resolver
        self._allow = allow

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._resolver.resolve(host, port, family)
        addresses = [ipaddress.ip_address(entry["host"]) for entry in found]
        problem = self._allow.problem(host, addresses)
        if problem is not None:
            raise AddressRefused(problem)
        return found

    async def close(self) -> None:
        await self._resolver.close()

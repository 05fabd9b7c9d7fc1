"""Webhooks do not go into the server's own networks unless ASKBRIDGE_WEBHOOK_ALLOW says so:
refused when asked, checked again at delivery on the addresses actually connected to, and
every refusal is in the audit trail. Host names resolve through a stub resolver, so nothing
here sends traffic anywhere but to a receiver on 127.0.0.1."""

from __future__ import annotations

import ipaddress
import re
import socket
from pathlib import Path

import aiohttp
import pytest
from aiohttp.abc import AbstractResolver, ResolveResult
from pydantic import ValidationError

from askbridge.bots.service import Service
from askbridge.core.callback_guard import AllowList, address_kind
from askbridge.core.clock import ManualClock
from tests.conftest import DEPLOY, settings_for
from tests.test_webhooks import SAME_MACHINE, SECRET, attempts, receiver, trail, webhooks


class StubResolver(AbstractResolver):
    """Answers from `names` (which a test may change between calls) and records what it was
    asked; an unknown name does not resolve."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        if host not in self.names:
            raise OSError(f"{host} does not resolve here")
        address = self.names[host]
        kind = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [
            ResolveResult(hostname=host, host=address, port=port, family=kind, proto=0, flags=0)
        ]

    async def close(self) -> None:
        pass


NOT_GLOBAL = [
    ("127.0.0.1", "loopback"),
    ("::1", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("fd12:3456::1", "private"),
    ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"),
    ("100.64.0.1", "shared (CGNAT)"),
    ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("240.0.0.1", "private"),
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:169.254.169.254", "link-local"),
    ("::ffff:10.0.0.1", "private"),
]


@pytest.mark.parametrize(("address", "kind"), NOT_GLOBAL)
def test_addresses_that_are_not_global_are_named(address: str, kind: str) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:4700:4700::1111", "8.8.8.8"])
def test_global_addresses_pass(address: str) -> None:
    assert address_kind(ipaddress.ip_address(address)) is None


def test_the_allow_list_names_hosts_addresses_and_networks() -> None:
    allow = AllowList.parse(" 127.0.0.1, Hooks.Internal., 10.8.0.0/16 ,[::1]")
    assert allow.allows_host("hooks.internal")
    assert allow.problem("hooks.internal", [ipaddress.ip_address("10.9.9.9")]) is None
    assert allow.problem("x", [ipaddress.ip_address("10.8.1.2")]) is None
    assert allow.problem("x", [ipaddress.ip_address("::ffff:127.0.0.1")]) is None
    assert allow.problem("x", [ipaddress.ip_address("::1")]) is None
    problem = allow.problem("x", [ipaddress.ip_address("10.9.0.1")])
    assert problem is not None
    assert "ASKBRIDGE_WEBHOOK_ALLOW" in problem
    for bad in ("10.0.0.0/33", "http://hooks/", "a b"):
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            AllowList.parse(bad)


def test_a_broken_allow_list_is_refused_at_startup(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=re.escape("10.0.0.0/33")):
        settings_for(tmp_path, webhook_allow="10.0.0.0/33")


async def post_ask(
    http: aiohttp.ClientSession, url: str, callback_url: str, request_id: str = "ask_deploy"
) -> aiohttp.ClientResponse:
    body = {"request_id": request_id, "questions": [DEPLOY], "callback_url": callback_url}
    async with http.post(f"{url}/v1/questions", json=body) as response:
        await response.read()
        return response


async def test_a_callback_url_into_the_servers_networks_is_refused_when_asked(
    tmp_path: Path, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    resolver = StubResolver({"metadata.internal": "169.254.169.254", "db.corp": "10.0.0.5"})
    settings = settings_for(tmp_path, webhook_secret=SECRET)
    service = Service(settings, clock=clock, resolver=resolver)
    await service.start()
    try:
        for url in (
            "http://169.254.169.254/latest/meta-data/",
            "http://127.0.0.1:6379/",
            "http://[::ffff:127.0.0.1]:8080/hook",
            "http://[fe80::1]/hook",
            "http://100.64.1.1/hook",
            "https://metadata.internal/hook",
            "http://db.corp:5432/",
        ):
            body = {"questions": [DEPLOY], "callback_url": url}
            async with http.post(f"{service.url}/v1/questions", json=body) as response:
                refused = await response.json()
                assert response.status == 422, (url, refused)
            assert refused["details"][0]["location"] == "callback_url"
            assert "ASKBRIDGE_WEBHOOK_ALLOW" in refused["error"], refused
        assert resolver.asked == ["metadata.internal", "db.corp"]
        # A name that does not resolve now is left to delivery, which checks it again.
        body = {"questions": [DEPLOY], "callback_url": "https://later.example/hook"}
        async with http.post(f"{service.url}/v1/questions", json=body) as response:
            assert response.status == 201
    finally:
        await service.stop()


async def test_a_name_that_resolves_inward_at_delivery_is_refused_and_recorded(
    tmp_path: Path, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    # Public when asked, the loopback address when the webhook is sent (DNS rebinding).
    names = {"receiver.example": "93.184.216.34"}
    resolver = StubResolver(names)
    service = Service(settings_for(tmp_path, webhook_secret=SECRET), clock=clock, resolver=resolver)
    await service.start()
    try:
        async with receiver([200]) as hook:
            port = hook.url.rsplit(":", 1)[1].split("/")[0]
            assert (await post_ask(http, service.url, f"http://receiver.example:{port}/hook")).ok
            names["receiver.example"] = "127.0.0.1"
            async with http.delete(f"{service.url}/v1/questions/ask_deploy") as response:
                assert response.status == 200
            events = await trail(service, "ask_deploy", attempts(1))
            assert hook.seen == []
        assert resolver.asked == ["receiver.example", "receiver.example"]
        assert await service.store.next_delivery() is None
    finally:
        await service.stop()
    (refusal,) = webhooks(events)
    assert refusal["result"] == "failed"
    assert "status" not in refusal
    assert refusal["error"].startswith("refused: receiver.example resolves to 127.0.0.1")
    assert "ASKBRIDGE_WEBHOOK_ALLOW" in refusal["error"]


async def test_an_address_no_longer_allowed_at_delivery_is_refused_and_recorded(
    tmp_path: Path, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    allowed = Service(
        settings_for(tmp_path, webhook_secret=SECRET, webhook_allow=SAME_MACHINE), clock=clock
    )
    async with receiver([200]) as hook:
        await allowed.start()
        try:
            assert (await post_ask(http, allowed.url, hook.url)).status == 201
        finally:
            await allowed.stop()
        # Restarted without the allow-list: the request's ending is not sent there.
        service = Service(settings_for(tmp_path, webhook_secret=SECRET), clock=clock)
        await service.start()
        try:
            async with http.delete(f"{service.url}/v1/questions/ask_deploy") as response:
                assert response.status == 200
            events = await trail(service, "ask_deploy", attempts(1))
        finally:
            await service.stop()
        assert hook.seen == []
    (refusal,) = webhooks(events)
    assert refusal["result"] == "failed"
    assert refusal["error"].startswith("refused: 127.0.0.1 is a loopback address")


async def test_an_allowed_host_name_is_delivered_to_where_it_resolves(
    tmp_path: Path, clock: ManualClock, http: aiohttp.ClientSession
) -> None:
    resolver = StubResolver({"hooks.test": "127.0.0.1"})
    settings = settings_for(tmp_path, webhook_secret=SECRET, webhook_allow="hooks.test")
    service = Service(settings, clock=clock, resolver=resolver)
    await service.start()
    try:
        async with receiver([200]) as hook:
            port = hook.url.rsplit(":", 1)[1].split("/")[0]
            assert (await post_ask(http, service.url, f"http://hooks.test:{port}/hook")).ok
            async with http.delete(f"{service.url}/v1/questions/ask_deploy") as response:
                assert response.status == 200
            hit = await hook.next()
            events = await trail(service, "ask_deploy", attempts(1))
    finally:
        await service.stop()
    assert hit.headers["Host"] == f"hooks.test:{port}"
    assert [w["result"] for w in webhooks(events)] == ["delivered"]

"""Three `askbridge serve` processes on one PostgreSQL schema behind the Teams emulator, with
no stickiness anywhere: as the load balancer in front of the bot's messaging endpoint would,
each press goes to the next replica in turn, whichever posted the card. Every press is
answered, every request once; every person is told at most once; every card is updated once
per change and shows its end once; an agent long-polling another replica hears the answer;
and a press Teams delivers again, to another replica or to two at once, counts once."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp

from tests.conftest import DEPLOY
from tests.emulators.teams import TeamsEmulator
from tests.emulators.teams.cards import plain_texts
from tests.emulators.teams.emulator import Person, Posted
from tests.server_process import ServerProcess
from tests.stores import postgres_schema
from tests.teams.conftest import actions
from tests.teams.test_answering import ask, ended

REPLICAS = 3
REQUESTS = 20
"""60 presses: three people press every card at once, two approving and one rejecting."""
NOTES = ("This question was already", "Your vote is counted")
"""How each note a press can be told here begins, above the card only its presser sees."""


class Replicas:
    """`askbridge serve` on one database, and the load balancer in front of their messaging
    endpoint: each delivery to the next replica in turn."""

    def __init__(self, servers: list[ServerProcess], urls: list[str]) -> None:
        self.servers, self.urls = servers, urls
        self._turns: Iterator[int] = itertools.cycle(range(len(urls)))
        self.turns: list[int] = []
        """Which replica each delivery went to, in order."""

    def next(self) -> str:
        """The replica the load balancer hands the next delivery to."""
        turn = next(self._turns)
        self.turns.append(turn)
        return self.urls[turn]

    def handled(self, what: str) -> list[int]:
        """How many lines of each replica's log hold `what`."""
        return [len([line for line in s.log if what in line]) for s in self.servers]


@contextlib.asynccontextmanager
async def replicas(folder: Path, teams: TeamsEmulator) -> AsyncIterator[Replicas]:
    async with postgres_schema() as database_url:
        env = {
            **teams.settings(),
            "ASKBRIDGE_DATABASE_URL": database_url,
            # MSAL trusts the emulated authority's certificate, as a real one's through the
            # system's.
            "REQUESTS_CA_BUNDLE": str(teams.cert),
        }
        servers = []
        for i in range(REPLICAS):
            (folder / f"replica{i}").mkdir()
            servers.append(ServerProcess(folder / f"replica{i}" / "unused.db", env=env))
        try:
            # The first creates the schema; the others start together.
            urls = [await servers[0].start()]
            urls += await asyncio.gather(*(s.start() for s in servers[1:]))
            running = Replicas(servers, urls)
            yield running
            # SIGTERM: each replica finishes what it took (its card updates) and exits 0.
            assert await asyncio.gather(*(s.stop() for s in servers)) == [0] * REPLICAS
        finally:
            for server in servers:
                if server.process and server.process.returncode is None:
                    await server.kill()


def deploy(n: int, quorum: int) -> dict[str, Any]:
    return {
        "request_id": f"ask_race_{n}",
        "questions": [{**copy.deepcopy(DEPLOY), "question": f"Deploy build {n} to production?"}],
        "quorum": quorum,
    }


def told(answer: Any) -> list[str]:
    """The notes on the card a press was answered with."""
    return [text for text in plain_texts(answer["value"]) if text.startswith(NOTES)]


async def long_poll(http: aiohttp.ClientSession, url: str, request_id: str) -> dict[str, Any]:
    """The agent's wait for its answer, on `url`."""
    async with http.get(f"{url}/v1/questions/{request_id}?wait=20") as response:
        assert response.status == 200
        found: dict[str, Any] = await response.json()
    return found


def check_versions(message: Posted) -> None:
    """Each version of the card after the first shows a change: none says again what the one
    before said, and only the last shows the end."""
    later = message.versions[1:]
    assert later, "the card was never updated"
    assert all(a != b for a, b in itertools.pairwise(message.versions)), "an update changed nothing"
    assert [ended(card) for card in later] == [False] * (len(later) - 1) + [True]


async def test_conflicting_presses_across_replicas_are_each_answered_once(
    tmp_path: Path, teams: TeamsEmulator, http: aiohttp.ClientSession
) -> None:
    people = [
        (
            Person(f"aad-a{n}", f"Ann {n}"),
            Person(f"aad-r{n}", f"Rob {n}"),
            Person(f"aad-c{n}", f"Cy {n}"),
        )
        for n in range(REQUESTS)
    ]
    conversation = teams.add_conversation(*itertools.chain(*people))
    async with replicas(tmp_path, teams) as running:
        urls = running.urls
        # Even requests end at the first press; odd ones when two approve. The agent asks on
        # one replica and waits on the next.
        quorums = [1 + n % 2 for n in range(REQUESTS)]
        messages: list[Posted] = []
        waits: list[asyncio.Task[dict[str, Any]]] = []
        for n in range(REQUESTS):
            asked = await ask(
                http, urls[n % REPLICAS], **deploy(n, quorums[n]), target=f"teams:{conversation}"
            )
            messages.append(teams.posted[asked["messages"][0]["message_id"]])
            poll = long_poll(http, urls[(n + 1) % REPLICAS], f"ask_race_{n}")
            waits.append(asyncio.create_task(poll, name=f"wait-{n}"))
        answers: list[list[Any]] = []
        for message, (ann, rob, cy) in zip(messages, people, strict=True):
            buttons = actions(message.card)
            presses = [(ann, "Approve"), (rob, "Reject"), (cy, "Approve")]
            results = await asyncio.gather(
                *(
                    teams.press(running.next(), message, person, buttons[option])
                    for person, option in presses
                )
            )
            assert [code for code, _ in results] == [200] * 3, results
            answers.append([body for _, body in results])
        finals = await asyncio.gather(*waits)
        for message in messages:
            await teams.wait_for_card(message, ended)
    assert teams.refused == []
    assert running.turns == [0, 1, 2] * REQUESTS, "each card pressed through all three"

    for n, (final, message, trio, said) in enumerate(
        zip(finals, messages, people, answers, strict=True)
    ):
        assert final["status"] == "answered", final
        ann, rob, cy = trio
        winner = final["answered_by"]
        notes = {person.aad_id: told(answer) for person, answer in zip(trio, said, strict=True)}
        assert notes[winner["id"]] == [], "the press that decided needs no note"
        check_versions(message)
        # Each recorded vote is one change; an update may show two at once, never one twice.
        assert len(message.versions) - 1 <= len(final["votes"])
        final_text = " ".join(plain_texts(message.versions[-1]))
        if quorums[n] == 1:
            # The first press answers; the two others are told who did, once each.
            approved = winner["id"] != rob.aad_id
            assert final["answers"] == {"Deploy": "Approve" if approved else "Reject"}
            assert len(message.versions) == 2, "one change, one update"
            late = f"This question was already answered by {winner['name']}."
            assert [notes[p.aad_id] for p in trio if p.aad_id != winner["id"]] == [[late]] * 2
            assert f"Answered by {winner['name']}" in final_text
        else:
            # Ann and Cy agree, whoever of them comes second decides; the other is told their
            # vote counted, and Rob that his did, or that it came too late.
            assert final["answers"] == {"Deploy": "Approve"}
            assert winner["id"] in (ann.aad_id, cy.aad_id)
            first = ann if winner["id"] == cy.aad_id else cy
            [counted] = notes[first.aad_id]
            assert counted.startswith("Your vote is counted: 1 of 2")
            [robs] = notes[rob.aad_id]
            assert robs.startswith(NOTES), robs
            assert f"Answered by {ann.name}, {cy.name}" in final_text or (
                f"Answered by {cy.name}, {ann.name}" in final_text
            )
    # Each request was decided on the replica its deciding press went to, which for some was
    # neither the one that posted the card nor the one the agent waited on.
    decided_on = [
        running.turns[3 * n + [p.aad_id for p in trio].index(final["answered_by"]["id"])]
        for n, (final, trio) in enumerate(zip(finals, people, strict=True))
    ]
    assert running.handled(" answered on teams by ") == [
        decided_on.count(r) for r in range(REPLICAS)
    ]
    assert any(len({n % REPLICAS, (n + 1) % REPLICAS, on}) == 3 for n, on in enumerate(decided_on))


async def test_a_press_delivered_again_to_another_replica_counts_once(
    tmp_path: Path, teams: TeamsEmulator, http: aiohttp.ClientSession
) -> None:
    ann, rob, cy = Person("aad-ann", "Ann"), Person("aad-rob", "Rob"), Person("aad-cy", "Cy")
    conversation = teams.add_conversation(ann, rob, cy)
    async with replicas(tmp_path, teams) as running:
        first, second, third = running.urls
        # Posted by the first replica, answered through the second; Teams, which had no
        # answer in time, delivers the same press again, to the third.
        await ask(http, first, **deploy(0, 1), target=f"teams:{conversation}")
        message = await teams.wait_for_message(conversation)
        approve, reject = actions(message.card)["Approve"], actions(message.card)["Reject"]
        code, won = await teams.press(second, message, ann, approve, activity_id="press-ann")
        assert code == 200
        code, again = await teams.press(third, message, ann, approve, activity_id="press-ann")
        assert code == 200
        # Rob, too late, is told so once: not again when his press comes round once more.
        code, lost = await teams.press(third, message, rob, reject, activity_id="press-rob")
        assert code == 200
        code, lost_again = await teams.press(first, message, rob, reject, activity_id="press-rob")
        assert code == 200
        final = await long_poll(http, first, "ask_race_0")
        await teams.wait_for_card(message, ended)

        # A vote toward a quorum delivered to two replicas at the same moment counts once:
        # Cy's card says so on one of them only, and the request still waits for a second.
        await ask(http, second, **deploy(1, 2), target=f"teams:{conversation}")
        tallied = await teams.wait_for_message(conversation, 2)
        approve = actions(tallied.card)["Approve"]
        both = await asyncio.gather(
            teams.press(first, tallied, cy, approve, activity_id="press-cy"),
            teams.press(third, tallied, cy, approve, activity_id="press-cy"),
        )
        async with http.get(f"{third}/v1/questions/ask_race_1") as response:
            waiting = await response.json()
    # Each delivery after the first was known as such where it landed.
    again_on = running.handled("delivered again")
    replayed_on = running.handled("ignored a replayed click")
    assert sum(again_on) + sum(replayed_on) == 3, (again_on, replayed_on)
    assert final["status"] == "answered"
    assert final["answered_by"]["id"] == ann.aad_id
    assert [v["voter"]["id"] for v in final["votes"]] == [ann.aad_id]
    for answer in (won, again):
        assert told(answer) == []
        assert ended(answer["value"])
    assert told(lost) == ["This question was already answered by Ann."]
    assert told(lost_again) == []
    assert len(message.versions) == 2, "one change, one update"

    assert [code for code, _ in both] == [200, 200]
    assert sorted(len(told(body)) for _, body in both) == [0, 1]
    assert waiting["status"] == "waiting"
    assert [v["voter"]["id"] for v in waiting["votes"]] == [cy.aad_id]

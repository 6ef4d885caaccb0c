"""Bad input gets a clear JSON error and changes nothing; the same start twice is one run."""

from __future__ import annotations

import concurrent.futures

from _server_support import Server


def test_malformed_bodies_are_422_naming_the_field(server: Server) -> None:
    """Invariant: a missing or mistyped field is 422 whose `loc` names it; no run is started."""
    with server.client() as client:
        before = len(client.get("/v1/runs?limit=500").json()["runs"])
        missing = client.post("/v1/agents/payer/runs", json={"thread_id": "t"})
        assert missing.status_code == 422
        assert missing.json()["detail"][0]["loc"] == ["body", "input"] and "body.input" in missing.json()["message"]
        typed = client.post("/v1/agents/payer/runs", json={"input": ["not", "text"]})
        assert typed.status_code == 422 and typed.json()["detail"][0]["loc"] == ["body", "input"]
        not_json = client.post("/v1/agents/payer/runs", content=b"{", headers={"content-type": "application/json"})
        assert not_json.status_code == 422
        assert client.get("/v1/runs?status=nonsense").status_code == 422
        assert client.get("/v1/runs?cursor=%%%").status_code == 422
        assert len(client.get("/v1/runs?limit=500").json()["runs"]) == before


def test_unknown_things_are_404(server: Server) -> None:
    """Invariant: an unknown agent, run or call is 404 with a sentence saying what exists."""
    with server.client() as client:
        agent = client.post("/v1/agents/nobody/runs", json={"input": "hi"})
        assert agent.status_code == 404 and "payer" in agent.json()["detail"]
        for path in ("/v1/runs/nope", "/v1/runs/nope/events", "/v1/runs/nope/state"):
            assert client.get(path).status_code == 404, path
        assert client.post("/v1/runs/nope/approvals/c1", json={"approved": True}).status_code == 404
        run_id = client.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 1 to B"}).json()["run_id"]
        assert client.post(f"/v1/runs/{run_id}/approvals/zzz", json={"approved": True}).status_code == 404
        assert client.post(f"/v1/runs/{run_id}/reconcile/wire_1", json={"retry": True}).status_code == 409
        assert client.get("/v1/threads/no-such-thread").status_code == 404


def test_a_body_over_the_limit_is_413(server: Server) -> None:
    """Invariant: a body over the size limit is refused with 413 before it is read; no run starts."""
    with server.client() as client:
        huge = client.post("/v1/agents/payer/runs", content=b'{"input": "' + b"x" * 1_100_000 + b'"}',
                           headers={"content-type": "application/json"})  # fmt: skip
        assert huge.status_code == 413 and "bytes" in huge.json()["detail"]


def test_the_same_start_sent_twice_is_one_run(server: Server) -> None:
    """Invariant: an Idempotency-Key (or a run_id) sent again, even concurrently, answers with the
    run it started and starts no other (one run with that id, one run_started)."""
    with server.client() as client:

        def start(_: int) -> tuple[int, str]:
            answer = client.post(
                "/v1/agents/ticker/runs", json={"input": "ticks=2"}, headers={"Idempotency-Key": "order-77"}
            )
            return answer.status_code, answer.json()["run_id"]

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(start, range(4)))
        assert len({run_id for _, run_id in answers}) == 1
        assert {code for code, _ in answers} <= {200, 202}
        run_id = answers[0][1]
        settled = client.post(
            "/v1/agents/ticker/runs?wait=true", json={"input": "ticks=2"}, headers={"Idempotency-Key": "order-77"}
        )
        assert settled.status_code == 200 and settled.json()["status"] == "completed"
        events = client.get(f"/v1/runs/{run_id}/events").json()["events"]
        assert [e["type"] for e in events].count("run_queued") == 1
        assert [e["type"] for e in events].count("run_started") == 1
        again = client.post("/v1/agents/ticker/runs", json={"input": "ticks=2", "run_id": "mine-1"})
        same = client.post("/v1/agents/ticker/runs", json={"input": "ticks=2", "run_id": "mine-1"})
        assert again.status_code == 202 and same.status_code == 200 and same.json()["run_id"] == "mine-1"
        clash = client.post("/v1/agents/payer/runs", json={"input": "x", "run_id": "mine-1"})
        assert clash.status_code == 409


def test_listing_filters_and_pages(server: Server) -> None:
    """Invariant: /v1/runs filters by status and agent, newest first, and its cursor pages
    through every run exactly once."""
    with server.client() as client:
        for n in range(5):
            client.post("/v1/agents/ticker/runs?wait=true", json={"input": "ticks=0", "thread_id": f"page-{n}"})
        everything = client.get("/v1/runs?limit=500").json()["runs"]
        seen: list[str] = []
        cursor = None
        while True:
            page = client.get("/v1/runs", params={"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
            seen += [r["run_id"] for r in page["runs"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == [r["run_id"] for r in everything]
        assert [r["updated_at"] for r in everything] == sorted((r["updated_at"] for r in everything), reverse=True)
        completed = client.get("/v1/runs?status=completed&agent=ticker&limit=500").json()["runs"]
        assert completed and all(r["status"] == "completed" and r["agent"] == "ticker" for r in completed)
        threads = client.get("/v1/threads").json()["threads"]
        assert {"page-0", "page-4"} <= {t["thread_id"] for t in threads}
        thread = client.get("/v1/threads/page-3").json()
        assert thread["turn_count"] == 1 and len(thread["runs"]) == 1


def test_time_travel_state_at_an_event(server: Server) -> None:
    """Invariant: /state?at_seq=N is the fold after event N: fewer messages before the answer."""
    with server.client() as client:
        run = client.post("/v1/agents/ticker/runs?wait=true", json={"input": "ticks=1"}).json()
        queued = client.get(f"/v1/runs/{run['run_id']}/state?at_seq=0").json()
        assert queued["seq"] == 0 and queued["status"] == "queued" and queued["messages"] == []
        early = client.get(f"/v1/runs/{run['run_id']}/state?at_seq=1").json()
        assert early["seq"] == 1 and early["status"] == "running" and early["steps"] == 0
        late = client.get(f"/v1/runs/{run['run_id']}/state").json()
        assert late["status"] == "completed" and len(late["messages"]) > len(early["messages"])
        assert client.get(f"/v1/runs/{run['run_id']}/state?at_seq=-1").status_code == 422


def test_daimon_prompt_endpoints(server: Server) -> None:
    """Invariant: POST /prompt answers like AgentResponse; /prompt/stream streams prompt_stream's
    events ending with done; /ready says the store answers."""
    from _server_support import read_sse

    with server.client() as client:
        multi = client.post("/prompt", json={"input": "ticks=1"})
        assert multi.status_code == 422 and "agent" in multi.json()["detail"]
        answer = client.post("/prompt", json={"input": "ticks=1", "agent": "ticker"}).json()
        assert (
            answer["status"] == "completed"
            and answer["text"].startswith("Ticked 1 times")
            and answer["iterations"] == 2
        )
        with client.stream("POST", "/prompt/stream", json={"input": "ticks=1", "agent": "ticker"}) as response:
            kinds = [item.event for item in read_sse(response)]
        assert kinds[-1] == "done" and "text_delta" in kinds and "tool_result" in kinds
        assert client.get("/ready").json()["status"] == "ready"

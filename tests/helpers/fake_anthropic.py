"""A local stand-in for the Anthropic API, so LLM-judge tests run the real SDK offline.

`FakeAnthropic` serves `POST /v1/messages` and the Message Batches endpoints
(`POST /v1/messages/batches`, `GET /v1/messages/batches/{id}`, `GET …/{id}/results` as JSON
Lines, `POST …/{id}/cancel`) on 127.0.0.1 with the JSON shapes the SDK parses. Point the SDK at
it with `ANTHROPIC_BASE_URL=fake.url`.

Scripting, per test:
- `grader(sentences, passages) -> reply`: builds the reply from the request's sentences
  (`[{"id", "text", "cites"}]`) and passages (`{label: text}`); a dict is sent as JSON, a string
  as is (for malformed replies).
- `script`: a queue of actions for the next `/v1/messages` calls, each a dict with any of
  `status` + `headers` + `error_type` (an error response), `delay` (seconds before answering,
  for timeouts), `text` (reply text instead of the grader's), `content` (the reply's content
  blocks as given, e.g. text blocks with citations), `stop_reason`, `usage`.
- `on_message(body, call_index) -> action | None`: a callback consulted when the queue is empty.
- `batch_outcome(custom_id, position) -> "succeeded" | "errored" | "canceled" | "expired"`.
- `polls_until_ended`: how many retrieves a batch answers `in_progress` before it ends.
- `usage`: the usage every successful message reports (a dict or a function of the body).

Everything the server receives is recorded in `requests` (method, path, lower-cased headers,
parsed body) for assertions; `batch_creations` counts batch submissions.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from helpers import local_http

Grader = Callable[[list[dict[str, Any]], dict[str, str]], Any]

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def request_input(body: Mapping[str, Any]) -> dict[str, Any]:
    """The judge's JSON input block (passages and sentences) of a Messages request body."""
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = [{"text": content}] if isinstance(content, str) else content
        for block in blocks:
            text = block.get("text", "")
            if text.lstrip().startswith("{"):
                try:
                    value = json.loads(text)
                except json.JSONDecodeError:
                    continue
                if isinstance(value, dict) and "sentences" in value:
                    return value
    raise ValueError("no judge input block in the request")


def supported_everywhere(sentences: list[dict[str, Any]], passages: dict[str, str]) -> dict[str, Any]:
    """A grader that calls every sentence supported, quoting the first words of each cited passage."""
    return {
        "sentences": [
            {
                "id": s["id"],
                "verdict": "supported",
                "citations": [{"label": lab, "support": "full"} for lab in s["cites"]],
                "quotes": [
                    {"label": lab, "quote": " ".join(passages[lab].split()[:4])} for lab in s["cites"]
                ],
            }
            for s in sentences
        ]
    }


@dataclass
class _Batch:
    id: str
    requests: list[dict[str, Any]]
    polls: int = 0
    canceled: bool = False
    results: list[dict[str, Any]] | None = None


@dataclass
class FakeAnthropic:
    grader: Grader = supported_everywhere
    script: deque[dict[str, Any]] = field(default_factory=deque)
    on_message: Callable[[dict[str, Any], int], dict[str, Any] | None] | None = None
    batch_outcome: Callable[[str, int], str] = lambda custom_id, position: "succeeded"
    polls_until_ended: int = 1
    usage: dict[str, int] | Callable[[dict[str, Any]], dict[str, int]] = field(
        default_factory=lambda: {"input_tokens": 100, "output_tokens": 50}
    )
    requests: list[dict[str, Any]] = field(default_factory=list)
    batch_creations: int = 0
    batches: dict[str, _Batch] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._message_calls = 0
        self._server: ThreadingHTTPServer | None = None
        self.url = ""

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                fake._dispatch(self, "GET")

            def do_POST(self) -> None:
                fake._dispatch(self, "POST")

        self._server, self.url = local_http.start(Handler)
        return self

    def stop(self) -> None:
        local_http.stop(self._server)
        self._server = None

    # -- assertions helpers ----------------------------------------------------------------
    def message_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST" and r["path"] == "/v1/messages"]

    def split_messages(self) -> list[dict[str, Any]]:
        """The claim splitter's direct Messages requests (bodies with the claims rubric)."""
        return [r for r in self.message_requests() if is_split_request(r["body"])]

    def split_batches(self) -> list[_Batch]:
        """The batches the claim splitter submitted (every request in them is a split request)."""
        return [b for b in self.batches.values() if b.requests and all(
            is_split_request(r["params"]) for r in b.requests)]

    # -- request handling ------------------------------------------------------------------
    def _dispatch(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        path = handler.path.split("?", 1)[0]
        with self._lock:
            self.requests.append(
                {
                    "method": method,
                    "path": path,
                    "headers": {k.lower(): v for k, v in handler.headers.items()},
                    "body": body,
                }
            )
        parts = path.strip("/").split("/")
        if method == "POST" and path == "/v1/messages":
            return self._messages(handler, body)
        if parts[:3] == ["v1", "messages", "batches"]:
            if method == "POST" and len(parts) == 3:
                return self._create_batch(handler, body)
            batch = self.batches.get(parts[3]) if len(parts) > 3 else None
            if batch is None:
                return self._error(handler, 404, {})
            if method == "GET" and len(parts) == 4:
                return self._retrieve_batch(handler, batch)
            if method == "GET" and parts[4:] == ["results"]:
                return self._results(handler, batch)
            if method == "POST" and parts[4:] == ["cancel"]:
                batch.canceled = True
                return self._json(handler, 200, self._batch_json(batch, ended=True))
        return self._error(handler, 404, {})

    def _messages(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self._lock:
            index = self._message_calls
            self._message_calls += 1
            action = self.script.popleft() if self.script else None
        if action is None and self.on_message is not None:
            action = self.on_message(body, index)
        action = action or {}
        if action.get("delay"):
            time.sleep(action["delay"])
        if action.get("status", 200) != 200:
            return self._error(handler, action["status"], action.get("headers", {}), action.get("error_type"))
        return self._json(handler, 200, self._message_json(body, action))

    def _message_json(self, body: dict[str, Any], action: Mapping[str, Any]) -> dict[str, Any]:
        if "content" in action:
            text = ""
        elif "text" in action:
            text = action["text"]
        else:
            payload = request_input(body)
            passages = {p["label"]: p["text"] for p in payload["passages"]}
            reply = self.grader(payload["sentences"], passages)
            text = reply if isinstance(reply, str) else json.dumps(reply)
        usage = action.get("usage") or (self.usage(body) if callable(self.usage) else dict(self.usage))
        return {
            "id": f"msg_{next(self._ids)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "unknown"),
            "content": action.get("content") or [{"type": "text", "text": text}],
            "stop_reason": action.get("stop_reason", "end_turn"),
            "stop_sequence": None,
            "usage": usage,
        }

    def _create_batch(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self._lock:
            self.batch_creations += 1
            batch = _Batch(id=f"msgbatch_{next(self._ids)}", requests=list(body["requests"]))
            self.batches[batch.id] = batch
        return self._json(handler, 200, self._batch_json(batch, ended=False))

    def _retrieve_batch(self, handler: BaseHTTPRequestHandler, batch: _Batch) -> None:
        with self._lock:
            batch.polls += 1
            ended = batch.canceled or batch.polls > self.polls_until_ended
        return self._json(handler, 200, self._batch_json(batch, ended=ended))

    def _batch_results(self, batch: _Batch) -> list[dict[str, Any]]:
        if batch.results is None:
            rows = []
            for position, req in enumerate(batch.requests):
                kind = "canceled" if batch.canceled else self.batch_outcome(req["custom_id"], position)
                if kind == "succeeded":
                    result = {"type": "succeeded", "message": self._message_json(req["params"], {})}
                elif kind == "errored":
                    result = {
                        "type": "errored",
                        "error": {
                            "type": "error",
                            "request_id": None,
                            "error": {"type": "api_error", "message": "boom"},
                        },
                    }
                else:
                    result = {"type": kind}
                rows.append({"custom_id": req["custom_id"], "result": result})
            batch.results = list(reversed(rows))  # results come in no particular order
        return batch.results

    def _batch_json(self, batch: _Batch, *, ended: bool) -> dict[str, Any]:
        counts = {
            "processing": len(batch.requests),
            "succeeded": 0,
            "errored": 0,
            "canceled": 0,
            "expired": 0,
        }
        if ended:
            counts["processing"] = 0
            for row in self._batch_results(batch):
                counts[row["result"]["type"]] += 1
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": "2026-11-30T10:00:00Z",
            "expires_at": "2026-12-01T10:00:00Z",
            "ended_at": "2026-11-30T10:05:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _results(self, handler: BaseHTTPRequestHandler, batch: _Batch) -> None:
        data = "".join(json.dumps(row) + "\n" for row in self._batch_results(batch)).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/binary")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    # -- plumbing --------------------------------------------------------------------------
    def _json(self, handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        try:
            handler.send_response(status)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.send_header("request-id", f"req_{next(self._ids)}")
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    def _error(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        headers: Mapping[str, str],
        error_type: str | None = None,
    ) -> None:
        payload = {
            "type": "error",
            "error": {
                "type": error_type or _ERROR_TYPES.get(status, "api_error"),
                "message": f"fake {status}",
            },
        }
        data = json.dumps(payload).encode()
        try:
            handler.send_response(status)
            for key, value in headers.items():
                handler.send_header(key, value)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass


@contextmanager
def running(**kwargs: Any) -> Iterator[FakeAnthropic]:
    """Start a fake for the duration of a block."""
    fake = FakeAnthropic(**kwargs).start()
    try:
        yield fake
    finally:
        fake.stop()


# -- reply builders for tests -----------------------------------------------------------------


def entry(
    sid: str | int, verdict: str, supports: Mapping[str, str], quotes: Sequence[tuple[str, str]] = ()
) -> dict:
    """One reply entry: `supports` maps label → full/partial/none, `quotes` are (label, words)."""
    return {
        "id": str(sid),
        "verdict": verdict,
        "citations": [{"label": lab, "support": s} for lab, s in supports.items()],
        "quotes": [{"label": lab, "quote": q} for lab, q in quotes],
    }


def grade_by_id(entries: Mapping[str, dict[str, Any]]) -> Grader:
    """A grader answering each asked sentence with its scripted entry; asked ids without one are left out."""

    def grader(sentences: list[dict[str, Any]], passages: dict[str, str]) -> dict[str, Any]:
        return {"sentences": [entries[s["id"]] for s in sentences if s["id"] in entries]}

    return grader


def is_split_request(params: Mapping[str, Any]) -> bool:
    """Whether a Messages body is the LLM claim splitter's (its system prompt is the claims rubric)."""
    system = params.get("system") or [{}]
    return "split the sentences" in (system[0].get("text", "") if isinstance(system, list) else system)


def claim_splits_as(claims_of: Mapping[str, Any] | str) -> Grader:
    """A grader answering split requests from a table of sentence text → claims (a sentence not in
    it: its own text; a string instead of a reply object: sent as is, a malformed reply) and judge
    requests with every sentence supported."""

    def grader(sentences: list[dict[str, Any]], passages: dict[str, str]) -> Any:
        if sentences and "cites" in sentences[0]:
            return supported_everywhere(sentences, passages)
        if isinstance(claims_of, str):
            return claims_of
        return {"sentences": [{"id": s["id"], "claims": claims_of.get(s["text"], [s["text"]])} for s in sentences]}

    return grader


def serve_with_env(monkeypatch, api_key: str):
    """Start a fake server and point the real SDK at it through the standard env vars (a fixture body)."""
    server = FakeAnthropic().start()
    for var in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CUSTOM_HEADERS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", api_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    try:
        yield server
    finally:
        server.stop()

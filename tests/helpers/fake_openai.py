"""A local stand-in for the OpenAI Chat Completions API, so trace tests run the real OpenAI SDK
(and the instrumentations that wrap it) offline.

`FakeOpenAI` serves `POST /v1/chat/completions` on 127.0.0.1 with the JSON shape the SDK parses.
Point the SDK at it with `OpenAI(base_url=fake.url + "/v1", api_key="test")`.

Scripting: `reply(body) -> str` gives the assistant's text for a request body (default: "OK");
`script` is a queue of texts for the next calls, consulted first. Every request body is recorded
in `requests`.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from helpers import local_http


@dataclass
class FakeOpenAI:
    reply: Callable[[dict[str, Any]], str] = lambda body: "OK"
    script: deque[str] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self.url = ""

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                fake._post(self)

        self._server, self.url = local_http.start(Handler)
        return self

    def stop(self) -> None:
        local_http.stop(self._server)
        self._server = None

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        with self._lock:
            self.requests.append(body)
            text = self.script.popleft() if self.script else None
            number = next(self._ids)
        if handler.path.rstrip("/") != "/v1/chat/completions":
            return self._json(handler, 404, {"error": {"message": "not found", "type": "invalid_request_error"}})
        text = self.reply(body) if text is None else text
        return self._json(handler, 200, {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 1_764_000_000,
            "model": body.get("model", "unknown"),
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": text, "refusal": None}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        })

    @staticmethod
    def _json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


@contextmanager
def running(**kwargs: Any) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(**kwargs).start()
    try:
        yield fake
    finally:
        fake.stop()

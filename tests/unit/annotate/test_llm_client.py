"""The LLM explainer's client (annotate.evidence.llm) against a real HTTP server in the
test that speaks OpenAI's chat-completions protocol: what it sends, what it reads, and a
clear message for each way the endpoint can fail."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from annotate.evidence.llm import LlmConfig, LlmError, describe_key, prompt_messages
from annotate.evidence.suggest import PrefixText


@dataclass
class FakeEndpoint:
    """What the server answers next, and what it was sent."""

    status: int = 200
    body: bytes = b""
    hold: threading.Event | None = None  # answer only once set (a server that hangs)
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    def answer(self, content: Any) -> None:
        self.status = 200
        self.body = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            }
        ).encode()


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    state = FakeEndpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            state.requests.append(
                {
                    "path": self.path,
                    "headers": dict(self.headers),
                    "json": json.loads(self.rfile.read(length)),
                }
            )
            if state.hold is not None:
                state.hold.wait(30)
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(state.body)))
            self.end_headers()
            self.wfile.write(state.body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        if state.hold is not None:
            state.hold.set()
        server.shutdown()
        server.server_close()
        thread.join()


PREFIXES = [
    PrefixText(rank=1, text="The history of", trigger_token=" of"),
    PrefixText(rank=2, text="A map of", trigger_token=" of"),
    PrefixText(rank=3, text="In the middle of", trigger_token=" of"),
]


def _config(endpoint: FakeEndpoint, **kwargs: Any) -> LlmConfig:
    return LlmConfig(base_url=endpoint.url, model="tiny-explainer", **kwargs)


def test_it_posts_a_chat_completion_and_reads_the_description(endpoint):
    endpoint.answer('  "The word of at the end of a phrase"\nmore text')
    config = _config(endpoint, api_key="sekret")
    assert describe_key(config, PREFIXES, max_chars=500) == "The word of at the end of a phrase"
    (sent,) = endpoint.requests
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == "Bearer sekret"
    body = sent["json"]
    assert body["model"] == "tiny-explainer"
    assert body["temperature"] == 0
    assert body["messages"] == prompt_messages(PREFIXES)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    user = body["messages"][1]["content"].splitlines()
    assert user == ["1. The history[[ of]]", "2. A map[[ of]]", "3. In the middle[[ of]]"]


def test_without_a_key_no_authorization_is_sent(endpoint):
    endpoint.answer("the preposition of")
    describe_key(_config(endpoint), PREFIXES, max_chars=500)
    assert "Authorization" not in endpoint.requests[0]["headers"]


def test_a_long_answer_is_cut_to_the_description_limit(endpoint):
    endpoint.answer("x" * 900)
    assert describe_key(_config(endpoint), PREFIXES, max_chars=100) == "x" * 100


def test_an_http_error_names_the_status_and_the_endpoint(endpoint):
    endpoint.status, endpoint.body = 500, b'{"error": "model not loaded"}'
    with pytest.raises(LlmError) as caught:
        describe_key(_config(endpoint), PREFIXES, max_chars=500)
    message = str(caught.value)
    assert "HTTP 500" in message
    assert f"{endpoint.url}/chat/completions" in message
    assert "model not loaded" in message


def test_an_answer_that_is_not_json_says_so(endpoint):
    endpoint.status, endpoint.body = 200, b"<html>proxy error</html>"
    with pytest.raises(LlmError, match="not JSON: '<html>proxy error</html>'"):
        describe_key(_config(endpoint), PREFIXES, max_chars=500)


@pytest.mark.parametrize(
    "body",
    [b"{}", b'{"choices": []}', b'{"choices": [{"message": {}}]}', b"[1, 2]"],
)
def test_json_without_the_text_says_what_is_missing(endpoint, body):
    endpoint.status, endpoint.body = 200, body
    with pytest.raises(LlmError, match=r"without choices\[0\]\.message\.content"):
        describe_key(_config(endpoint), PREFIXES, max_chars=500)


def test_an_empty_answer_is_no_description(endpoint):
    endpoint.answer("  \n ")
    with pytest.raises(LlmError, match="empty description"):
        describe_key(_config(endpoint), PREFIXES, max_chars=500)


def test_an_endpoint_that_does_not_answer_in_time_times_out(endpoint):
    endpoint.hold = threading.Event()
    endpoint.answer("too late")
    with pytest.raises(LlmError, match=r"gave no answer within 0\.3 s"):
        describe_key(_config(endpoint, timeout_s=0.3), PREFIXES, max_chars=500)


def test_an_endpoint_nobody_listens_on_cannot_be_reached(endpoint):
    config = LlmConfig(base_url="http://127.0.0.1:9/v1", model="m", timeout_s=5)
    with pytest.raises(LlmError, match="could not be reached"):
        describe_key(config, PREFIXES, max_chars=500)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FFKV_LLM_BASE_URL": "127.0.0.1:8080/v1"}, "FFKV_LLM_BASE_URL must start with http"),
        ({"FFKV_LLM_BASE_URL": "http://127.0.0.1:8080/v1"}, "FFKV_LLM_MODEL must be set"),
        ({"FFKV_LLM_TIMEOUT_S": "soon"}, "FFKV_LLM_TIMEOUT_S must be an integer"),
    ],
)
def test_a_bad_llm_setting_stops_the_start_with_the_variables_name(env, message):
    from tests.unit.test_settings import _check

    result = _check(env)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr

"""The optional LLM explainer's client (docs/evidence.md, "The LLM explainer").

Any server that speaks OpenAI's chat-completions protocol (vLLM, llama.cpp's server,
Ollama, a hosted API): ``POST {base_url}/chat/completions`` with a model name and
messages, answered by ``{"choices": [{"message": {"content": ...}}]}``. Off unless
``FFKV_LLM_BASE_URL`` is set. Standard library only, no Django: the service reads the
settings and stores the description.

Every failure is an ``LlmError`` whose message names the endpoint and what went wrong
(not reachable, no answer in time, an HTTP error, an answer that is not JSON or has no
text); the caller then writes nothing for the key.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .suggest import PrefixText

MAX_PREFIX_CHARS = 300  # of each prefix's end: the trigger is at the end
MAX_ANSWER_TOKENS = 60
SYSTEM_PROMPT = (
    "You explain what one key of a transformer language model's feed-forward layer "
    "responds to. You are shown the text prefixes that activate it most; it fires at the "
    "last token of each, marked [[like this]]. Reply with one short phrase, at most 15 "
    "words, naming the pattern most of them share: shallow (a word, a word ending, a "
    "phrase) or semantic (a topic, a role, a meaning). No preamble, no quotes."
)


class LlmError(RuntimeError):
    """The endpoint gave no usable description; the message says why."""


@dataclass(frozen=True)
class LlmConfig:
    base_url: str  # e.g. http://127.0.0.1:8080/v1
    model: str
    api_key: str = ""
    timeout_s: float = 60.0

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"


def _marked(prefix: PrefixText) -> str:
    text, trigger = prefix.text, prefix.trigger_token
    if trigger and text.endswith(trigger):
        text = f"{text[: -len(trigger)]}[[{trigger}]]"
    else:
        text = f"{text}[[]]"
    return text[-MAX_PREFIX_CHARS:].replace("\n", " ")


def prompt_messages(prefixes: Sequence[PrefixText]) -> list[dict[str, str]]:
    """The chat messages for one key: the instructions, then its prefixes by rank."""
    lines = [f"{prefix.rank}. {_marked(prefix)}" for prefix in prefixes]
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def _post(config: LlmConfig, body: dict[str, Any]) -> bytes:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    request = urllib.request.Request(
        config.url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=config.timeout_s) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as error:
        detail = error.read()[:200].decode("utf-8", "replace").strip()
        raise LlmError(
            f"the LLM endpoint {config.url} answered HTTP {error.code}"
            + (f": {detail}" if detail else "")
        ) from error
    except TimeoutError as error:
        raise LlmError(
            f"the LLM endpoint {config.url} gave no answer within {config.timeout_s:g} s"
        ) from error
    except urllib.error.URLError as error:
        if isinstance(error.reason, TimeoutError):
            raise LlmError(
                f"the LLM endpoint {config.url} gave no answer within {config.timeout_s:g} s"
            ) from error
        raise LlmError(
            f"the LLM endpoint {config.url} could not be reached: {error.reason}"
        ) from error
    except OSError as error:  # a connection reset mid-answer
        raise LlmError(f"the LLM endpoint {config.url} failed: {error}") from error


def chat_completion(config: LlmConfig, messages: Sequence[dict[str, str]]) -> str:
    """The text of the first choice of one chat completion."""
    body = {
        "model": config.model,
        "messages": list(messages),
        "temperature": 0,
        "max_tokens": MAX_ANSWER_TOKENS,
    }
    raw = _post(config, body)
    try:
        answer = json.loads(raw)
    except ValueError as error:
        start = raw[:80].decode("utf-8", "replace")
        raise LlmError(
            f"the LLM endpoint {config.url} answered something that is not JSON: {start!r}"
        ) from error
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as error:
        raise LlmError(
            f"the LLM endpoint {config.url} answered JSON without choices[0].message.content"
        ) from error
    if not isinstance(content, str):
        raise LlmError(f"the LLM endpoint {config.url} answered a content that is not text")
    return content


def clean_description(text: str, *, max_chars: int) -> str:
    """The answer as a pattern's description: its first non-empty line, without
    surrounding quotes, cut to ``max_chars``."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    line = line.strip("\"'` ").strip()
    return line[:max_chars].rstrip()


def describe_key(config: LlmConfig, prefixes: Sequence[PrefixText], *, max_chars: int) -> str:
    """One description of a key from its top-k prefixes; ``LlmError`` if there is none."""
    description = clean_description(
        chat_completion(config, prompt_messages(prefixes)), max_chars=max_chars
    )
    if not description:
        raise LlmError(f"the LLM endpoint {config.url} answered an empty description")
    return description

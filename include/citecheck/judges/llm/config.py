"""The LLM judge's settings and prices: `LLMConfig`, validated from an `anthropic` judge spec."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from citecheck.judges.base import JudgeSpecError

DEFAULT_MODEL = "claude-sonnet-5-5"
BATCH_DISCOUNT = 0.5
TRANSPORTS = ("messages", "batches")


@dataclass(frozen=True, slots=True)
class Pricing:
    """USD per million tokens. Cache reads and writes are billed apart from plain input."""

    input_per_mtok: float
    output_per_mtok: float
    cache_read_per_mtok: float
    cache_write_per_mtok: float

    def cost(self, usage: Usage, *, batch: bool = False) -> float:
        usd = (
            usage.input_tokens * self.input_per_mtok
            + usage.output_tokens * self.output_per_mtok
            + usage.cache_read_tokens * self.cache_read_per_mtok
            + usage.cache_write_tokens * self.cache_write_per_mtok
        ) / 1_000_000
        return usd * BATCH_DISCOUNT if batch else usd


# Claude Sonnet 5.5 list prices (platform.claude.com model overview): $2 / $10 per MTok,
# 5-minute cache writes $2.50, cache reads $0.20; the Batch API halves all of them.
DEFAULT_PRICING: dict[str, Pricing] = {
    DEFAULT_MODEL: Pricing(
        input_per_mtok=2.0, output_per_mtok=10.0, cache_read_per_mtok=0.20, cache_write_per_mtok=2.50
    ),
}


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @classmethod
    def of(cls, message: Any) -> Usage:
        u = message.usage
        return cls(
            u.input_tokens or 0,
            u.output_tokens or 0,
            u.cache_read_input_tokens or 0,
            u.cache_creation_input_tokens or 0,
        )

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(frozen=True, slots=True)
class LLMConfig:
    model: str = DEFAULT_MODEL
    max_tokens: int = 1024
    timeout_s: float = 120.0
    max_retries: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    concurrency: int = 8
    transport: str = "messages"
    poll_interval_s: float = 60.0
    batch_max_wait_s: float = 26 * 3600.0
    pricing: Mapping[str, Pricing] = field(default_factory=lambda: dict(DEFAULT_PRICING))
    budget_usd: float | None = 20.0
    budget_answers: int | None = None
    effort: str | None = "low"
    thinking: str | None = None
    prompt_caching: bool = True
    chars_per_token: float = 3.0
    batch_state_path: str | None = None

    @property
    def price(self) -> Pricing:
        return self.pricing[self.model]


_SPEC_FIELDS = set(LLMConfig.__dataclass_fields__) | {"kind", "about"}


def config_from_spec(spec: Mapping[str, Any]) -> LLMConfig:
    """Validate an `anthropic` judge spec; every mistake is a `JudgeSpecError` before any work."""
    unknown = set(spec) - _SPEC_FIELDS
    if unknown:
        raise JudgeSpecError(f"anthropic judge: unknown fields {sorted(unknown)}")
    d = LLMConfig()
    model = spec.get("model", d.model)
    if not isinstance(model, str) or not model:
        raise JudgeSpecError("anthropic judge: 'model' must be a non-empty string")
    pricing = dict(DEFAULT_PRICING)
    pricing.update(_pricing(spec.get("pricing", {})))
    if model not in pricing:
        raise JudgeSpecError(f"anthropic judge: no pricing for model {model!r}; add it under 'pricing'")
    transport = spec.get("transport", d.transport)
    if transport not in TRANSPORTS:
        raise JudgeSpecError(f"anthropic judge: 'transport' must be one of {list(TRANSPORTS)}")
    effort = spec.get("effort", d.effort)
    if effort not in (None, "low", "medium", "high", "xhigh", "max"):
        raise JudgeSpecError("anthropic judge: 'effort' must be null, low, medium, high, xhigh or max")
    thinking = spec.get("thinking", d.thinking)
    if thinking not in (None, "adaptive", "disabled"):
        raise JudgeSpecError("anthropic judge: 'thinking' must be null, 'adaptive' or 'disabled'")
    caching = spec.get("prompt_caching", d.prompt_caching)
    if not isinstance(caching, bool):
        raise JudgeSpecError("anthropic judge: 'prompt_caching' must be true or false")
    state_path = spec.get("batch_state_path")
    if state_path is not None and not isinstance(state_path, str):
        raise JudgeSpecError("anthropic judge: 'batch_state_path' must be a path string")
    return LLMConfig(
        model=model,
        max_tokens=_int(spec, "max_tokens", d.max_tokens, low=1),
        timeout_s=_num(spec, "timeout_s", d.timeout_s, positive=True),
        max_retries=_int(spec, "max_retries", d.max_retries, low=0),
        backoff_base_s=_num(spec, "backoff_base_s", d.backoff_base_s),
        backoff_max_s=_num(spec, "backoff_max_s", d.backoff_max_s),
        concurrency=_int(spec, "concurrency", d.concurrency, low=1),
        transport=transport,
        poll_interval_s=_num(spec, "poll_interval_s", d.poll_interval_s),
        batch_max_wait_s=_num(spec, "batch_max_wait_s", d.batch_max_wait_s),
        pricing=pricing,
        budget_usd=_optional(spec, "budget_usd", d.budget_usd, _num),
        budget_answers=_optional(spec, "budget_answers", d.budget_answers, _int),
        effort=effort,
        thinking=thinking,
        prompt_caching=caching,
        chars_per_token=_num(spec, "chars_per_token", d.chars_per_token, positive=True),
        batch_state_path=state_path,
    )


def _num(spec: Mapping[str, Any], key: str, default: float, *, positive: bool = False) -> float:
    value = spec.get(key, default)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or value < 0
        or (positive and value == 0)
    ):
        raise JudgeSpecError(
            f"anthropic judge: '{key}' must be a {'positive' if positive else 'non-negative'} number"
        )
    return float(value)


def _int(spec: Mapping[str, Any], key: str, default: int, *, low: int = 0) -> int:
    value = spec.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise JudgeSpecError(f"anthropic judge: '{key}' must be an integer >= {low}")
    return value


def _optional(spec: Mapping[str, Any], key: str, default: Any, parse: Callable[..., Any]) -> Any:
    if key in spec and spec[key] is None:
        return None
    return parse(spec, key, default) if key in spec else default


def _pricing(value: Any) -> dict[str, Pricing]:
    if not isinstance(value, Mapping):
        raise JudgeSpecError("anthropic judge: 'pricing' must map model ids to prices")
    out = {}
    for model, row in value.items():
        if not isinstance(row, Mapping) or not {"input_per_mtok", "output_per_mtok"} <= set(row):
            raise JudgeSpecError(
                f"anthropic judge: pricing for {model!r} needs input_per_mtok and output_per_mtok"
            )
        extra = set(row) - set(Pricing.__dataclass_fields__)
        if extra:
            raise JudgeSpecError(f"anthropic judge: pricing for {model!r} has unknown fields {sorted(extra)}")
        prices = {k: _num(row, k, 0.0) for k in row}
        prices.setdefault("cache_read_per_mtok", prices["input_per_mtok"] * 0.1)
        prices.setdefault("cache_write_per_mtok", prices["input_per_mtok"] * 1.25)
        out[str(model)] = Pricing(**prices)
    return out


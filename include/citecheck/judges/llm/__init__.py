"""The LLM judge (SPEC §4): Anthropic verdicts whose quotes are checked before they count.

One request per answer (turn) covers all of its sentences to judge; the rubric is the shared,
prompt-cached system prompt, and the reply is asked for as structured output and validated again
on receipt. It is this object, part of the product's contract:

    {"sentences": [{"id": "3", "verdict": "supported|partial|not_supported|contradicted",
                    "citations": [{"label": "S1", "support": "full|partial|none"}],
                    "quotes": [{"label": "S1", "quote": "exact words"}]}]}

A verdict counts only when its quotes are found, word for word, in the passages the sentence
cites; per-citation credit follows Liu et al. (2023) (`judges.derive.liu_credit`). One concern
a module:

| module          | holds                                                                   |
| --------------- | ----------------------------------------------------------------------- |
| `config`        | `LLMConfig` from a judge spec; prices and token usage                   |
| `prompt`        | the rubric (`rubric.txt`), the re-ask note and `REPLY_SCHEMA`           |
| `requests`      | one request per answer, with its worst-case cost estimate               |
| `replies`       | a reply parsed against the schema, or `MalformedReply`                  |
| `verify`        | quote and label checks of one reply entry, giving an `Assessment`       |
| `assessment`    | `Assessment` and `judgment_of`, the one mapping to a Judgment           |
| `budget`        | USD / answer reservations that spend never exceeds                      |
| `ledger`        | what a judge counted, for its `stats()`                                 |
| `transport`     | the API client, retries, Messages calls and re-asks                     |
| `batches`       | the Message Batches transport                                           |
| `batch_state`   | where a run's batch id lives, so a retry reattaches                     |
| `judge`         | `AnthropicJudge` and `from_spec`                                        |
| `claims`        | the claim splitter (`[claims] mode = "llm"`) on the judge's client     |
"""

from citecheck.judges.derive import liu_credit
from citecheck.judges.llm.assessment import Assessment, judgment_of, not_judged
from citecheck.judges.llm.batch_state import BatchStateStore, JsonFileBatchStateStore, MemoryBatchStateStore
from citecheck.judges.llm.budget import Budget
from citecheck.judges.llm.config import (
    BATCH_DISCOUNT,
    DEFAULT_MODEL,
    DEFAULT_PRICING,
    TRANSPORTS,
    LLMConfig,
    Pricing,
    Usage,
    config_from_spec,
)
from citecheck.judges.llm.judge import AnthropicJudge, from_spec
from citecheck.judges.llm.prompt import REASK_NOTE, REPLY_SCHEMA, RUBRIC, SUPPORT_LEVELS, VERDICTS
from citecheck.judges.llm.replies import MalformedReply, assess_reply, parse_reply
from citecheck.judges.llm.requests import (
    AnswerRequest,
    RequestEstimate,
    build_params,
    build_requests,
    estimate_request,
    estimate_tokens,
    request_payload,
    system_blocks,
)
from citecheck.judges.llm.transport import retry_after_s
from citecheck.judges.llm.verify import assess_entry

__all__ = [
    "BATCH_DISCOUNT",
    "DEFAULT_MODEL",
    "DEFAULT_PRICING",
    "REASK_NOTE",
    "REPLY_SCHEMA",
    "RUBRIC",
    "SUPPORT_LEVELS",
    "TRANSPORTS",
    "VERDICTS",
    "AnswerRequest",
    "AnthropicJudge",
    "Assessment",
    "BatchStateStore",
    "Budget",
    "JsonFileBatchStateStore",
    "LLMConfig",
    "MalformedReply",
    "MemoryBatchStateStore",
    "Pricing",
    "RequestEstimate",
    "Usage",
    "assess_entry",
    "assess_reply",
    "build_params",
    "build_requests",
    "config_from_spec",
    "estimate_request",
    "estimate_tokens",
    "from_spec",
    "judgment_of",
    "liu_credit",
    "not_judged",
    "parse_reply",
    "request_payload",
    "retry_after_s",
    "system_blocks",
]

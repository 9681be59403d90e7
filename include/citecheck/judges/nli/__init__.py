"""The NLI judge (SPEC §4): a `CrossEncoder` scoring window or chunk premises of the passages.

    settings.py  the judge file's fields (`parse_spec`, `NLISettings`)
    backends.py  where the model runs: torch, ONNX Runtime, OpenVINO; fp32, int8, half precision
    scorer.py    the loaded model: its support label, token counts, probabilities (`load_scorer`)
    premises.py  what both premise modes share: sentences, token counts, over-long sentences cut
    windows.py   one- and two-sentence windows inside one passage (the default)
    chunks.py    passages packed in order into chunks of `chunk_tokens` tokens (`"premise": "chunks"`)
    judge.py     `NLIJudge`: pairs collected, deduplicated, cached and scored once; judgments derived
    languages.py `LanguageNLIJudge`: the `"models"` map, a model per language (`language_unsupported`)

The public names below are importable from `citecheck.judges.nli`.
"""

from citecheck.judges.nli.judge import MIN_PREMISE_TOKENS, NLIJudge, from_spec
from citecheck.judges.nli.languages import LanguageNLIJudge
from citecheck.judges.nli.scorer import CrossEncoderScorer, ModelLoadError, Pair, label_indices, load_scorer
from citecheck.judges.nli.settings import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_MODEL,
    PREMISES,
    NLISettings,
    parse_spec,
)

__all__ = [
    "DEFAULT_CHUNK_TOKENS",
    "DEFAULT_MODEL",
    "MIN_PREMISE_TOKENS",
    "PREMISES",
    "CrossEncoderScorer",
    "LanguageNLIJudge",
    "ModelLoadError",
    "NLIJudge",
    "NLISettings",
    "Pair",
    "from_spec",
    "label_indices",
    "load_scorer",
    "parse_spec",
]

"""Tiny NLI cross-encoders built and saved locally, so judge tests load through the real path.

A BERT sequence classifier with random weights (a large init range, so different pairs get
clearly different probabilities), a real WordPiece tokenizer over a small vocabulary (single
letters and `##` letters, so every lower-case word tokenizes without [UNK]) and a small
`max_position_embeddings`, so over-long windows are easy to produce. The label order puts
entailment away from index 0; `save_permuted` writes the same model with the classifier rows
permuted, which must judge identically.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from pathlib import Path

TINY_MAX_LENGTH = 64
LABELS: tuple[str, ...] = ("neutral", "entailment", "contradiction")
_TEXT = (
    "the a an is are was of to in on for and or not no by with from at it this that per day days "
    "expense expenses report reports payroll claim claims receipt receipts travel hotel meal meals "
    "limit manager approval approve approved employee employees within must can may be paid pay "
    "submit submitted weeks week month months card policy form portal finance team"
)
_WORDS = tuple(_TEXT.split())


def tiny_vocab() -> dict[str, int]:
    """Specials, common words, letters, `##` letters, digits and punctuation."""
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokens += list(_WORDS)
    tokens += list(string.ascii_lowercase) + [f"##{c}" for c in string.ascii_lowercase]
    tokens += list(string.digits) + [f"##{d}" for d in string.digits]
    tokens += list(".,;:!?'\"()-%$/")
    return {tok: i for i, tok in enumerate(dict.fromkeys(tokens))}


def save_tiny_nli(
    path: Path,
    *,
    labels: Sequence[str] = LABELS,
    seed: int = 0,
    max_length: int = TINY_MAX_LENGTH,
    initializer_range: float = 1.0,
    classifier_std: float = 1.0,
) -> Path:
    """Build a random-weight BERT NLI classifier and save it (model + tokenizer) under `path`."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    vocab = tiny_vocab()
    config = BertConfig(**_tiny_shape(vocab, max_length, labels), initializer_range=initializer_range)
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        # A spread of logits wide enough that some pairs entail and some do not.
        model.classifier.weight.normal_(0.0, classifier_std)
        model.classifier.bias.zero_()
    model.eval()
    return _save(model, vocab, path, max_length)


def save_tiny_deberta_nli(path: Path, *, seed: int = 0, max_length: int = TINY_MAX_LENGTH) -> Path:
    """A random-weight DeBERTa-v2 NLI classifier with the tiny tokenizer: like DeBERTa-v3 NLI models,
    it has relative attention and no `token_type_ids` input (type_vocab_size 0)."""
    import torch
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification

    vocab = tiny_vocab()
    config = DebertaV2Config(
        **_tiny_shape(vocab, max_length, LABELS),
        initializer_range=0.1,
        type_vocab_size=0,
        relative_attention=True,
        position_buckets=16,
        pos_att_type=["p2c", "c2p"],
    )
    torch.manual_seed(seed)
    model = DebertaV2ForSequenceClassification(config)
    model.eval()
    return _save(model, vocab, path, max_length)


def _tiny_shape(vocab: dict[str, int], max_length: int, labels: Sequence[str]) -> dict:
    """The config fields both tiny models share: 2 layers of width 32, no dropout, the labels."""
    return {
        "vocab_size": len(vocab),
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "max_position_embeddings": max_length,
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
        "num_labels": len(labels),
        "id2label": dict(enumerate(labels)),
        "label2id": {lab: i for i, lab in enumerate(labels)},
    }


def _save(model, vocab: dict[str, int], path: Path, max_length: int) -> Path:
    """Save the model and a WordPiece tokenizer over `vocab` under `path`."""
    from transformers import BertTokenizer

    path.mkdir(parents=True, exist_ok=True)
    vocab_file = path / "vocab.txt"  # WordPiece's own file format: one token per line, in id order
    vocab_file.write_text("".join(f"{token}\n" for token in vocab), encoding="utf-8")
    BertTokenizer(vocab_file=str(vocab_file), model_max_length=max_length).save_pretrained(path)
    model.save_pretrained(path)
    return path


def save_permuted(source: Path, path: Path, order: Sequence[int]) -> Path:
    """Save `source` with classifier row `order[i]` moved to row i (labels moved with it)."""
    import torch
    from transformers import BertForSequenceClassification, BertTokenizer

    model = BertForSequenceClassification.from_pretrained(source)
    old = dict(model.config.id2label)
    with torch.no_grad():
        index = torch.tensor(list(order))
        model.classifier.weight.copy_(model.classifier.weight[index].clone())
        model.classifier.bias.copy_(model.classifier.bias[index].clone())
    model.config.id2label = {i: old[j] for i, j in enumerate(order)}
    model.config.label2id = {lab: i for i, lab in model.config.id2label.items()}
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    BertTokenizer.from_pretrained(source).save_pretrained(path)
    return path

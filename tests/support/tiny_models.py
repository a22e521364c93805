"""Tiny, randomly initialised models built on the fly, for tests only.

No weights can be downloaded here, so every training and inference path of the
neural systems is exercised on models made in a second or two: a tokenizer
trained by the ``tokenizers`` library on a handful of sentences, then a small
BERT (encoder: bi-encoder / cross-encoder backbone), T5 (seq2seq: DocT5Query)
or Llama (causal LM: RankGPT, LLM verification) config with random weights,
saved with ``save_pretrained`` so systems load them **by local path**, exactly
as a user's real checkpoint.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

SAMPLE_ABSTRACTS = [  # a small corpus for system tests (one topic each)
    "Sea level rise is accelerating because of melting ice sheets.",
    "Vitamin D supplementation reduces the risk of fractures in older adults.",
    "CO2 emissions from coal plants increased global temperatures.",
    "The vaccine showed 95 percent efficacy in the clinical trial.",
    "Arctic sea ice extent reached a record low in September.",
    "Gene expression in tumour cells is regulated by microRNA.",
    "Coral reefs bleach when ocean temperatures rise.",
    "Statins lower cholesterol and cardiovascular risk.",
    "Sleep deprivation impairs memory consolidation.",
    "Exercise improves insulin sensitivity in diabetes.",
    "Antibiotic resistance spreads through horizontal gene transfer.",
    "Air pollution is linked to asthma in children.",
]
DEFAULT_TEXTS = SAMPLE_ABSTRACTS[:7] + [  # tokenizer training text: abstracts plus prompt vocabulary
    "Query passage document claim evidence supports refutes not enough information.",
    "[1] > [2] > [3] > [4] > [5] > [6] > [7] > [8] > [9] > [10] 0 1 2 3 4 5 6 7 8 9",
]
SPECIAL_BERT = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _corpus(texts: Iterable[str] | None) -> list[str]:
    return list(texts or []) + DEFAULT_TEXTS


def train_wordpiece(texts: Iterable[str] | None = None, vocab_size: int = 400):
    """A lower-casing WordPiece ``BertTokenizerFast`` trained on ``texts`` (+ defaults)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(_corpus(texts), trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_BERT))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    tok.decoder = decoders.WordPiece()
    return BertTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                             sep_token="[SEP]", mask_token="[MASK]", model_max_length=512)


def train_bpe(texts: Iterable[str] | None, specials: Sequence[str], vocab_size: int = 400):
    """A byte-level BPE ``PreTrainedTokenizerFast`` (specials get ids 0, 1, 2, ... in order)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(specials),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_corpus(texts), trainer)
    return tok


def tiny_bert(path: str | Path, texts: Iterable[str] | None = None, hidden: int = 32, layers: int = 2,
              num_labels: int | None = None, seed: int = 0) -> str:
    """Save a tiny BERT (``BertModel``, or ``BertForSequenceClassification`` with ``num_labels``) + tokenizer."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel

    torch.manual_seed(seed)
    tokenizer = train_wordpiece(texts)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=hidden * 2, max_position_embeddings=512, pad_token_id=tokenizer.pad_token_id)
    if num_labels is not None:
        config.num_labels = num_labels
        model = BertForSequenceClassification(config)
    else:
        model = BertModel(config)
    path = Path(path)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def tiny_t5(path: str | Path, texts: Iterable[str] | None = None, d_model: int = 32, layers: int = 2, seed: int = 0) -> str:
    """Save a tiny ``T5ForConditionalGeneration`` (pad 0, eos 1, unk 2) + BPE tokenizer."""
    import torch
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    torch.manual_seed(seed)
    tok = train_bpe(texts, ["<pad>", "</s>", "<unk>"])
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", 1)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
                                        model_max_length=512)
    config = T5Config(vocab_size=len(tokenizer), d_model=d_model, d_kv=8, d_ff=d_model * 2, num_layers=layers,
                      num_decoder_layers=layers, num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    path = Path(path)
    T5ForConditionalGeneration(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def tiny_causal_lm(path: str | Path, texts: Iterable[str] | None = None, hidden: int = 32, layers: int = 2, seed: int = 0) -> str:
    """Save a tiny ``LlamaForCausalLM`` (pad 0, bos 1, eos 2) + BPE tokenizer with a chat template."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    torch.manual_seed(seed)
    tok = train_bpe(texts, ["<pad>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>"])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                                        model_max_length=2048)
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=hidden * 2,
                         num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=2048, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    path = Path(path)
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)

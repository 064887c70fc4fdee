#!/usr/bin/env python3
"""Generate Docent's tiny random fixture models (plumbing tests only, never quality).

Outputs, next to this script, laid out like a Docent models folder:

  embedding/tiny-random-bert/                 random BertModel -> ONNX (last_hidden_state)
  reranker/tiny-random-cross-encoder/         random BertForSequenceClassification(num_labels=1) -> ONNX (logits)
  llm/tiny-random-llama.gguf                  random 2-layer llama, byte-level BPE vocab, ChatML template

Both BERTs share one WordPiece tokenizer trained on the MCP docs corpus, so token counts are
realistic-ish. Everything is seeded, so re-running with the pinned requirements reproduces the
same bytes (checked: two runs give identical sha256 sums).

Usage (see README.md):
  python3 -m venv /tmp/venv-fixtures
  /tmp/venv-fixtures/bin/pip install -r test-fixtures/models/requirements.txt
  /tmp/venv-fixtures/bin/python test-fixtures/models/generate.py [--corpus /work/shared/corpora/mcp-docs]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = Path("/work/shared/corpora/mcp-docs")
SEED = 20240601

BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BERT_VOCAB = 3000
BERT_MAX_POS = 512

LLM_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
LLM_VOCAB = 1000
LLM_CTX = 2048
LLM_EMBD = 64
LLM_LAYERS = 2
LLM_HEADS = 4
LLM_HEADS_KV = 2
LLM_FF = 128

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    import torch

    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)


def corpus_files(corpus: Path) -> list[Path]:
    files = sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix in (".md", ".mdx"))
    if not files:
        sys.exit(f"no .md/.mdx files under {corpus}")
    return files


def corpus_texts(files: list[Path]):
    for f in files:
        yield f.read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------
# WordPiece tokenizer shared by the two BERTs
# --------------------------------------------------------------------------------------------


def train_wordpiece(files: list[Path]):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=BERT_VOCAB, special_tokens=BERT_SPECIALS, show_progress=False
    )
    tok.train_from_iterator(corpus_texts(files), trainer)
    # The trainer assigns ids to the initial alphabet in hash-map order, which changes from run to
    # run. WordPiece matching does not depend on ids, so renumber canonically: specials first,
    # then every other token in sorted order.
    trained = tok.get_vocab()
    rest = sorted(t for t in trained if t not in BERT_SPECIALS)
    vocab = {t: i for i, t in enumerate(BERT_SPECIALS + rest)}
    tok.model = models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100)
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    tok.decoder = decoders.WordPiece(prefix="##")
    return tok


def write_bert_tokenizer(tok, out: Path) -> None:
    tok.save(str(out / "tokenizer.json"), pretty=False)
    cfg = {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": True,
        "strip_accents": None,
        "tokenize_chinese_chars": True,
        "model_max_length": BERT_MAX_POS,
        "cls_token": "[CLS]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "unk_token": "[UNK]",
        "mask_token": "[MASK]",
        "clean_up_tokenization_spaces": True,
    }
    write_json(out / "tokenizer_config.json", cfg)
    write_json(
        out / "special_tokens_map.json",
        {k: cfg[k] for k in ("cls_token", "sep_token", "pad_token", "unk_token", "mask_token")},
    )


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------------------------
# Random BERTs -> ONNX
# --------------------------------------------------------------------------------------------


def bert_config(vocab_size: int, **extra):
    from transformers import BertConfig

    cfg = BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=BERT_MAX_POS,
        type_vocab_size=2,
        hidden_act="gelu",
        pad_token_id=0,
        # With the usual 0.02 init a 2-layer random BERT maps every text to almost the same [CLS]
        # vector (cosine 1.000 to three places); 0.3 gives texts visibly different vectors.
        initializer_range=0.3,
        **extra,
    )
    cfg._attn_implementation = "eager"  # plain matmul attention traces cleanly to ONNX
    return cfg


def export_onnx(wrapper, out_file: Path, output_name: str, output_axes: dict) -> None:
    import torch

    out_file.parent.mkdir(parents=True, exist_ok=True)
    ids = torch.tensor([[2, 10, 11, 12, 3], [2, 13, 14, 3, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    types = torch.zeros_like(ids)
    axes = {0: "batch_size", 1: "sequence_length"}
    with torch.no_grad():
        torch.onnx.export(
            wrapper,
            (ids, mask, types),
            str(out_file),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=[output_name],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                output_name: output_axes,
            },
            opset_version=17,
            do_constant_folding=True,
            dynamo=False,
        )
    # Strip the producer version so a torch patch release does not change the bytes needlessly.
    import onnx

    m = onnx.load(str(out_file))
    m.producer_version = ""
    m.doc_string = ""
    onnx.checker.check_model(m)
    onnx.save(m, str(out_file))


def make_embedder(tok, out: Path) -> None:
    import torch
    from transformers import BertModel

    torch.manual_seed(SEED + 1)
    cfg = bert_config(tok.get_vocab_size(), architectures=["BertModel"])
    model = BertModel(cfg, add_pooling_layer=False).eval()

    class Wrapper(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    export_onnx(Wrapper(model), out / "onnx" / "model.onnx", "last_hidden_state",
                {0: "batch_size", 1: "sequence_length"})
    write_config(cfg, out)
    write_bert_tokenizer(tok, out)
    write_json(out / "docent.json", {"pooling": "cls", "queryPrefix": ""})


def make_reranker(tok, out: Path) -> None:
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(SEED + 2)
    cfg = bert_config(
        tok.get_vocab_size(),
        architectures=["BertForSequenceClassification"],
        num_labels=1,
        id2label={0: "LABEL_0"},
        label2id={"LABEL_0": 0},
    )
    model = BertForSequenceClassification(cfg).eval()
    # The default init (std 0.02) makes every logit nearly equal; widen the head so different
    # passages get visibly different scores.
    with torch.no_grad():
        model.classifier.weight.normal_(0.0, 1.0)
        model.classifier.bias.zero_()

    class Wrapper(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).logits

    export_onnx(Wrapper(model), out / "onnx" / "model.onnx", "logits", {0: "batch_size"})
    write_config(cfg, out)
    write_bert_tokenizer(tok, out)


def write_config(cfg, out: Path) -> None:
    d = cfg.to_dict()
    # Drop fields that only record the generating library version / runtime dtype choice.
    for k in ("transformers_version", "_name_or_path", "torch_dtype", "dtype", "_attn_implementation_autoset"):
        d.pop(k, None)
    d["model_type"] = "bert"
    write_json(out / "config.json", d)


# --------------------------------------------------------------------------------------------
# Tiny random llama GGUF
# --------------------------------------------------------------------------------------------


def train_bytelevel_bpe(files: list[Path]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=LLM_VOCAB,
        special_tokens=LLM_SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus_texts(files), trainer)
    return tok


def make_llm(files: list[Path], out_file: Path) -> None:
    import gguf

    tok = train_bytelevel_bpe(files)
    vocab = tok.get_vocab()
    n_vocab = len(vocab)
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    assert [i for _, i in by_id] == list(range(n_vocab)), "vocab ids must be contiguous"
    tokens = [t for t, _ in by_id]
    merges_raw = json.loads(tok.to_str())["model"]["merges"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in merges_raw]
    token_types = [
        gguf.TokenType.CONTROL if t in LLM_SPECIALS else gguf.TokenType.NORMAL for t in tokens
    ]
    bos = vocab["<|endoftext|>"]
    eos = vocab["<|im_end|>"]

    rng = np.random.default_rng(SEED + 3)

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    head_dim = LLM_EMBD // LLM_HEADS
    kv_dim = head_dim * LLM_HEADS_KV

    # Weights are random, but shaped so that a JSON-schema grammar terminates quickly:
    # dimension 0 of every token embedding is a large constant, so after the final RMSNorm
    # hidden[0] is roughly constant and column 0 of the output matrix acts as a per-token logit
    # bias. Closing tokens ('"', ']', '}') get a positive bias (strings and arrays close soon,
    # so grammar-constrained JSON completes in a few dozen tokens), end-of-generation tokens a
    # negative one (free text runs until maxTokens or abort, which the tests rely on).
    token_embd = normal((n_vocab, LLM_EMBD), 0.1)
    token_embd[:, 0] = 2.0
    output = normal((n_vocab, LLM_EMBD), 0.1)
    output[:, 0] = 0.0
    # hidden[0] ends up around 6 (measured with a numpy forward pass), the random part of a
    # logit has std ~0.5, so a bias of 0.6 here is a logit offset of ~+3.8.
    closers = ['"', "]", "}", '"]', "Ġ}"]  # Ġ is the byte-level BPE space
    for text in closers:
        if text in vocab:
            output[vocab[text], 1:] *= 0.2
            output[vocab[text], 0] = 0.6
    for sp in LLM_SPECIALS:
        output[vocab[sp], 0] = -1.0

    w = gguf.GGUFWriter(str(out_file), "llama")
    w.add_name("tiny-random-llama")
    w.add_description("Random weights for Docent plumbing tests. Not a language model.")
    w.add_context_length(LLM_CTX)
    w.add_embedding_length(LLM_EMBD)
    w.add_block_count(LLM_LAYERS)
    w.add_feed_forward_length(LLM_FF)
    w.add_head_count(LLM_HEADS)
    w.add_head_count_kv(LLM_HEADS_KV)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(token_types)
    w.add_token_merges(merges)
    w.add_bos_token_id(bos)
    w.add_eos_token_id(eos)
    w.add_pad_token_id(bos)
    w.add_add_bos_token(False)
    w.add_chat_template(CHATML_TEMPLATE)

    f16 = np.float16
    w.add_tensor("token_embd.weight", token_embd.astype(f16))
    for i in range(LLM_LAYERS):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(LLM_EMBD, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", normal((LLM_EMBD, LLM_EMBD), 0.1).astype(f16))
        w.add_tensor(p + "attn_k.weight", normal((kv_dim, LLM_EMBD), 0.1).astype(f16))
        w.add_tensor(p + "attn_v.weight", normal((kv_dim, LLM_EMBD), 0.1).astype(f16))
        w.add_tensor(p + "attn_output.weight", normal((LLM_EMBD, LLM_EMBD), 0.02).astype(f16))
        w.add_tensor(p + "ffn_norm.weight", np.ones(LLM_EMBD, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", normal((LLM_FF, LLM_EMBD), 0.1).astype(f16))
        w.add_tensor(p + "ffn_up.weight", normal((LLM_FF, LLM_EMBD), 0.1).astype(f16))
        w.add_tensor(p + "ffn_down.weight", normal((LLM_EMBD, LLM_FF), 0.02).astype(f16))
    w.add_tensor("output_norm.weight", np.ones(LLM_EMBD, dtype=np.float32))
    w.add_tensor("output.weight", output.astype(f16))

    out_file.parent.mkdir(parents=True, exist_ok=True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# --------------------------------------------------------------------------------------------


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args()

    seed_everything(SEED)
    files = corpus_files(args.corpus)

    emb_dir = args.out / "embedding" / "tiny-random-bert"
    rr_dir = args.out / "reranker" / "tiny-random-cross-encoder"
    llm_file = args.out / "llm" / "tiny-random-llama.gguf"
    for d in (emb_dir, rr_dir):
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
    if llm_file.exists():
        llm_file.unlink()

    wp = train_wordpiece(files)
    make_embedder(wp, emb_dir)
    make_reranker(wp, rr_dir)
    make_llm(files, llm_file)

    for p in sorted(args.out.rglob("*")):
        if p.is_file() and p.suffix in (".onnx", ".gguf", ".json") and "node_modules" not in p.parts:
            rel = p.relative_to(args.out)
            print(f"{p.stat().st_size:>9}  {sha256(p)[:16]}  {rel}")


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    main()

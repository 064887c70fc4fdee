"""Torch-free BERT -> ONNX converter and a numpy reference forward pass to validate it.

The PyPI packages carry all-MiniLM-L6-v2 as safetensors only. torch from PyPI drags in GBs of
CUDA wheels, far too slow for CI, so the graph is written op by op with onnx.helper from the raw
tensors. The reference forward pass below is written independently of the graph (plain numpy,
float64, exact erf) so the two can catch each other's mistakes.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np

OPSET = 17  # LayerNormalization needs >= 17; onnxruntime-node 1.30 runs it.

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    # The format is an 8-byte header length, a JSON header and raw little-endian data: reading
    # it here spares a dependency and keeps the converter's input handling visible.
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"unsupported safetensors dtype {info['dtype']} for {name}")
        start, end = info["data_offsets"]
        arr = np.frombuffer(raw[base + start : base + end], dtype=dtype).reshape(info["shape"])
        out[name] = arr.astype(np.float32) if dtype == np.float16 else arr
    return out


def _strip_prefix(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    # Checkpoints saved from BertForX carry a "bert." prefix; BertModel ones do not.
    if any(k.startswith("bert.") for k in tensors):
        return {k[5:]: v for k, v in tensors.items() if k.startswith("bert.")}
    return tensors


class BertConfig:
    def __init__(self, cfg: dict) -> None:
        if cfg.get("model_type") != "bert":
            raise ValueError(f"model_type {cfg.get('model_type')!r} is not bert")
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"hidden_act {cfg.get('hidden_act')!r} is not supported (only exact gelu)")
        if cfg.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute position embeddings are supported")
        self.hidden = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.head_dim = self.hidden // self.heads


# --------------------------------------------------------------------------------------------
# ONNX graph


def build_onnx(model_dir: Path, out_path: Path, fused: bool = False) -> dict:
    """Writes the BERT encoder as an ONNX graph. `fused` writes each layer with onnxruntime's
    fused BERT operators (see _fused_layers) instead of standard ONNX ops."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    cfg = BertConfig(json.loads((model_dir / "config.json").read_text()))
    w = _strip_prefix(read_safetensors(model_dir / "model.safetensors"))
    inits: list = []
    nodes: list = []
    counter = [0]

    def name(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}_{counter[0]}"

    def const(key: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), key))
        return key

    def node(op: str, inputs: list[str], **attrs) -> str:
        out = name(op)
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def linear(x: str, prefix: str) -> str:
        wt = const(f"{prefix}.weight_t", w[f"{prefix}.weight"].T.astype(np.float32))
        b = const(f"{prefix}.bias", w[f"{prefix}.bias"].astype(np.float32))
        return node("Add", [node("MatMul", [x, wt]), b])

    def layer_norm(x: str, prefix: str) -> str:
        g = const(f"{prefix}.weight", w[f"{prefix}.weight"])
        b = const(f"{prefix}.bias", w[f"{prefix}.bias"])
        return node("LayerNormalization", [x, g, b], axis=-1, epsilon=cfg.eps)

    i64 = lambda key, vals: const(key, np.array(vals, dtype=np.int64))  # noqa: E731
    f32 = lambda key, val: const(key, np.array(val, dtype=np.float32))  # noqa: E731

    # Embeddings: word + position (0..seq-1) + token type, then LayerNorm.
    # Position rows are sliced off the table rather than gathered by Range(0, seq): with the
    # Range form, onnxruntime 1.24's embedding-LayerNorm fusion builds an invalid Slice.
    seq_len = node("Slice", [node("Shape", ["input_ids"]), i64("one_1d", [1]), i64("two_1d", [2])])
    pos_rows = node(
        "Slice",
        [const("position_embeddings", w["embeddings.position_embeddings.weight"]), i64("zero_1d", [0]), seq_len, i64("zero_ax", [0])],
    )
    emb = node(
        "Add",
        [
            node(
                "Add",
                [
                    node("Gather", [const("word_embeddings", w["embeddings.word_embeddings.weight"]), "input_ids"]),
                    pos_rows,
                ],
            ),
            node("Gather", [const("token_type_embeddings", w["embeddings.token_type_embeddings.weight"]), "token_type_ids"]),
        ],
    )
    x = layer_norm(emb, "embeddings.LayerNorm")

    if fused:
        x = _fused_layers(cfg, w, x, node, const)
    else:
        x = _plain_layers(cfg, x, node, const, linear, layer_norm, i64, f32)

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    dims = ["batch_size", "sequence_length"]
    graph = helper.make_graph(
        nodes,
        "bert",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, cfg.hidden])],
        inits,
    )
    opsets = [helper.make_opsetid("", OPSET)] + ([helper.make_opsetid("com.microsoft", 1)] if fused else [])
    model = helper.make_model(graph, opset_imports=opsets, producer_name="docent-models-dev")
    model.ir_version = 8
    onnx.checker.check_model(model)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(out_path))
    return {"opset": OPSET, "nodes": len(nodes), "initializers": len(inits), "onnx": onnx.__version__}


def _plain_layers(cfg: BertConfig, x: str, node, const, linear, layer_norm, i64, f32) -> str:
    """The encoder layers in standard ONNX ops (the fp32 model as installed)."""
    from onnx import TensorProto

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, float32 min where padded.
    mask_f = node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    inv = node("Sub", [f32("one_f", 1.0), mask_f])
    bias = node("Mul", [node("Unsqueeze", [inv, i64("axes_12", [1, 2])]), f32("neg_big", np.finfo(np.float32).min)])

    split_shape = i64("split_shape", [0, 0, cfg.heads, cfg.head_dim])
    merge_shape = i64("merge_shape", [0, 0, cfg.hidden])
    scale = f32("attn_scale", 1.0 / math.sqrt(cfg.head_dim))

    def heads(t: str) -> str:
        return node("Transpose", [node("Reshape", [t, split_shape])], perm=[0, 2, 1, 3])

    for i in range(cfg.layers):
        p = f"encoder.layer.{i}"
        q = heads(linear(x, f"{p}.attention.self.query"))
        k = heads(linear(x, f"{p}.attention.self.key"))
        v = heads(linear(x, f"{p}.attention.self.value"))
        kt = node("Transpose", [k], perm=[0, 1, 3, 2])
        scores = node("Add", [node("Mul", [node("MatMul", [q, kt]), scale]), bias])
        ctx = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        ctx = node("Reshape", [node("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_shape])
        attn = linear(ctx, f"{p}.attention.output.dense")
        x = layer_norm(node("Add", [attn, x]), f"{p}.attention.output.LayerNorm")
        h = linear(x, f"{p}.intermediate.dense")
        # Exact GELU, as BERT's "gelu": 0.5 * h * (1 + erf(h / sqrt(2))).
        erf = node("Erf", [node("Mul", [h, f32(f"inv_sqrt2_{i}", 1.0 / math.sqrt(2.0))])])
        h = node("Mul", [node("Mul", [h, node("Add", [erf, f32(f"one_g_{i}", 1.0)])]), f32(f"half_{i}", 0.5)])
        out = linear(h, f"{p}.output.dense")
        x = layer_norm(node("Add", [out, x]), f"{p}.output.LayerNorm")
    return x


def _fused_layers(cfg: BertConfig, w: dict[str, np.ndarray], x: str, node, const) -> str:
    """The encoder layers with onnxruntime's fused BERT operators (domain com.microsoft), the
    graph that the int8 model is quantised from: the same arithmetic as _plain_layers in a
    fraction of the kernels.

    - Attention: the Q, K and V projections packed into one [hidden, 3*hidden] weight, the heads,
      scaling, mask and softmax inside one kernel. Dynamic quantisation turns it into QAttention,
      so the projections run as int8. Quantising _plain_layers instead leaves about 30 small
      float kernels per layer around the int8 products (reshapes, transposes, the scaled and
      masked softmax, bias adds), which int8 cannot speed up: that graph ran at 1.4x fp32.
    - BiasGelu: the exact (erf) GELU of input + bias, as BERT's "gelu".
    - The residual adds and LayerNormalization stay standard ops: onnxruntime's CPU
      SkipLayerNormalization kernel took 4x as long as Add + LayerNormalization on the same
      [16, 150, 384] input (onnxruntime 1.30), so the runtime also turns that fusion off
      (src/engine/models/runtime/onnx-common.ts).

    The mask goes to Attention as each row's length (mask_index [batch], int32): Docent's
    encoder pads on the right, which is what that form means, and it spares the kernel a
    [batch, seq, seq] mask per layer."""
    from onnx import TensorProto

    ms = {"domain": "com.microsoft"}
    mask = node("Cast", ["attention_mask"], to=TensorProto.INT32)
    lengths = node("ReduceSum", [mask, const("mask_axis", np.array([1], dtype=np.int64))], keepdims=0)

    def weight_t(prefix: str) -> np.ndarray:
        return w[f"{prefix}.weight"].T.astype(np.float32)

    def bias(prefix: str) -> np.ndarray:
        return w[f"{prefix}.bias"].astype(np.float32)

    def dense(h: str, prefix: str) -> str:
        return node("MatMul", [h, const(f"{prefix}.weight_t", weight_t(prefix))])

    def residual_norm(h: str, residual: str, prefix: str, norm: str) -> str:
        h = node("Add", [node("Add", [h, const(f"{prefix}.bias", bias(prefix))]), residual])
        g, b = const(f"{norm}.weight", w[f"{norm}.weight"]), const(f"{norm}.bias", w[f"{norm}.bias"])
        return node("LayerNormalization", [h, g, b], axis=-1, epsilon=cfg.eps)

    for i in range(cfg.layers):
        p = f"encoder.layer.{i}"
        qkv = [f"{p}.attention.self.{m}" for m in ("query", "key", "value")]
        qkv_w = const(f"{p}.attention.qkv.weight_t", np.concatenate([weight_t(m) for m in qkv], axis=1))
        qkv_b = const(f"{p}.attention.qkv.bias", np.concatenate([bias(m) for m in qkv]))
        ctx = node("Attention", [x, qkv_w, qkv_b, lengths], num_heads=cfg.heads, **ms)
        out = f"{p}.attention.output.dense"
        x = residual_norm(dense(ctx, out), x, out, f"{p}.attention.output.LayerNorm")
        inter = f"{p}.intermediate.dense"
        h = node("BiasGelu", [dense(x, inter), const(f"{inter}.bias", bias(inter))], **ms)
        out = f"{p}.output.dense"
        x = residual_norm(dense(h, out), x, out, f"{p}.output.LayerNorm")
    return x


# --------------------------------------------------------------------------------------------
# numpy reference


def reference_forward(cfg: BertConfig, w: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """last_hidden_state [seq, hidden] of one unpadded sequence, float64."""
    n = len(ids)

    def ln(t: np.ndarray, p: str) -> np.ndarray:
        mu = t.mean(-1, keepdims=True)
        var = ((t - mu) ** 2).mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(var + cfg.eps) * w[f"{p}.weight"] + w[f"{p}.bias"]

    def lin(t: np.ndarray, p: str) -> np.ndarray:
        return t @ w[f"{p}.weight"].T + w[f"{p}.bias"]

    erf = np.vectorize(math.erf)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = ln(x, "embeddings.LayerNorm")
    for i in range(cfg.layers):
        p = f"encoder.layer.{i}"
        split = lambda t: t.reshape(n, cfg.heads, cfg.head_dim).transpose(1, 0, 2)  # noqa: E731
        q, k, v = (split(lin(x, f"{p}.attention.self.{m}")) for m in ("query", "key", "value"))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(cfg.head_dim)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, cfg.hidden)
        x = ln(lin(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        h = lin(x, f"{p}.intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        x = ln(lin(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
    return x


def validate(model_dir: Path, onnx_path: Path, sentences: list[str]) -> dict:
    """Runs the ONNX graph on a padded batch and the numpy reference per sentence; returns the
    worst absolute difference over real tokens and the mean-pooled unit vectors of both."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    enc = [tok.encode(s).ids for s in sentences]
    longest = max(len(e) for e in enc)
    ids = np.zeros((len(enc), longest), dtype=np.int64)
    mask = np.zeros_like(ids)
    for r, e in enumerate(enc):
        ids[r, : len(e)] = e
        mask[r, : len(e)] = 1
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    (hidden,) = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})
    cfg = BertConfig(json.loads((model_dir / "config.json").read_text()))
    w = {k: v.astype(np.float64) for k, v in _strip_prefix(read_safetensors(model_dir / "model.safetensors")).items()}
    worst = 0.0
    onnx_vecs, ref_vecs = [], []
    for r, e in enumerate(enc):
        ref = reference_forward(cfg, w, e)
        got = hidden[r, : len(e)].astype(np.float64)
        worst = max(worst, float(np.abs(got - ref).max()))
        for out, h in ((onnx_vecs, got), (ref_vecs, ref)):
            v = h.mean(0)
            out.append(v / np.linalg.norm(v))
    return {
        "maxAbsDiffLastHidden": worst,
        "tokens": [len(e) for e in enc],
        "onnxruntime": ort.__version__,
        "onnxVectors": [v.tolist() for v in onnx_vecs],
        "referenceVectors": [v.tolist() for v in ref_vecs],
    }

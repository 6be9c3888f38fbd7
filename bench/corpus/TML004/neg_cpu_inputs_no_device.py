# Modelled on: https://github.com/bowang-lab/Transformer-GCN-QA/issues/6
# Report: near-miss: the model runs on the CPU here, so collected embeddings live in host memory (no device memory grows).
import torch as T

encoder = T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(256, 4), num_layers=2).eval()
documents = [T.randn(64, 1, 256) for _ in range(100)]

embeddings = []
with T.no_grad():
    for doc in documents:
        embeddings.append(encoder(doc).mean(dim=0))
embeddings = T.cat(embeddings)

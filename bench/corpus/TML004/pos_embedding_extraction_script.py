# Modelled on: https://github.com/bowang-lab/Transformer-GCN-QA/issues/6
# Report: a preprocessing script collected every embedding before one big torch.cat and ran into memory errors.
import torch as T

encoder = T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(256, 4), num_layers=2).cuda().eval()
documents = [T.randn(64, 1, 256) for _ in range(2500)]

embeddings = []
with T.inference_mode():
    for doc in documents:
        emb = encoder(doc.cuda()).mean(dim=0)
        embeddings.append(emb)  # expect: TML004
embeddings = T.cat(embeddings)

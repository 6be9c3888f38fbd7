# Source: https://github.com/huggingface/sentence-transformers/pull/525
# Report: SentenceTransformer.encode ran out of GPU memory on large corpora because every batch's embeddings were extended into all_embeddings while still on the GPU
# Shape: fixed variant: each batch is detached and moved to the CPU before it is extended into all_embeddings, so only one batch is on the GPU at a time
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import nn


class SentenceEncoder(nn.Sequential):
    def __init__(self, modules, device="cuda"):
        super().__init__(*modules)
        self._target_device = torch.device(device)
        self.to(self._target_device)

    def tokenize(self, texts):
        return self[0].tokenize(texts)

    def encode(self, sentences, batch_size=32, output_value="sentence_embedding",
               convert_to_numpy=True, convert_to_tensor=False):
        self.eval()
        length_sorted_idx = np.argsort([-len(s) for s in sentences])
        sentences_sorted = [sentences[i] for i in length_sorted_idx]
        all_embeddings = []

        for start in range(0, len(sentences), batch_size):
            batch = sentences_sorted[start:start + batch_size]
            features = self.tokenize(batch)
            features = {k: v.to(self._target_device) for k, v in features.items()}

            with torch.no_grad():
                out_features = self.forward(features)
                embeddings = out_features[output_value]
                if output_value == "token_embeddings":
                    mask = out_features["attention_mask"].unsqueeze(-1)
                    embeddings = embeddings * mask
                embeddings = embeddings.detach().cpu()
                all_embeddings.extend(embeddings)

        all_embeddings = [all_embeddings[i] for i in np.argsort(length_sorted_idx)]

        if convert_to_tensor:
            all_embeddings = torch.stack(all_embeddings)
        elif convert_to_numpy:
            all_embeddings = np.asarray([emb.numpy() for emb in all_embeddings])
        return all_embeddings

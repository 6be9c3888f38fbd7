# Source: https://github.com/huggingface/sentence-transformers/issues/1244
# Report: encoding ~100M sentences OOMs on the GPU; maintainer: with convert_to_tensor=True the embeddings are kept as a tensor on the GPU, so memory grows with the corpus
# Shape: fixed as the maintainer advised (convert_to_numpy path): each batch is moved to CPU before it is kept
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import nn


class SentenceEncoder(nn.Module):
    def __init__(self, transformer, pooling, tokenizer, device="cuda"):
        super().__init__()
        self.transformer = transformer
        self.pooling = pooling
        self.tokenizer = tokenizer
        self._target_device = torch.device(device)

    def forward(self, features):
        token_embeddings = self.transformer(**features).last_hidden_state
        return self.pooling(token_embeddings, features["attention_mask"])

    def encode(self, sentences, batch_size=32, normalize_embeddings=False):
        self.eval()
        self.to(self._target_device)
        length_sorted_idx = np.argsort([-len(s) for s in sentences])
        sentences_sorted = [sentences[idx] for idx in length_sorted_idx]
        all_embeddings = []
        for start_index in range(0, len(sentences), batch_size):
            sentences_batch = sentences_sorted[start_index:start_index + batch_size]
            features = self.tokenizer(sentences_batch, padding=True, truncation=True, return_tensors="pt")
            features = {k: v.to(self._target_device) for k, v in features.items()}
            with torch.no_grad():
                embeddings = self.forward(features)
                embeddings = embeddings.detach()
                if normalize_embeddings:
                    embeddings = torch.nn.functional.normalize(embeddings, p=2, dim=1)
                embeddings = embeddings.cpu()
                all_embeddings.extend(embeddings)
        all_embeddings = [all_embeddings[idx] for idx in np.argsort(length_sorted_idx)]
        return np.asarray([emb.numpy() for emb in all_embeddings])

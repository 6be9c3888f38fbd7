# Source: https://github.com/McGill-NLP/llm2vec/issues/100
# Report: proposal to keep _encode's embeddings on the GPU; maintainer: they are moved to CPU on purpose, otherwise GPU memory keeps increasing as more documents are encoded
# Shape: the library's actual behaviour: _encode returns embeddings.cpu(), so the list the caller keeps lives in host memory
# Expect: near-miss: must be silent
import torch
from torch import nn


class LLMEncoder(nn.Module):
    def __init__(self, model, tokenizer, pooling_mode="mean", max_length=512):
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.pooling_mode = pooling_mode
        self.max_length = max_length

    def get_pooling(self, features, last_hidden_states):
        mask = features["attention_mask"].unsqueeze(-1).to(last_hidden_states.dtype)
        summed = (last_hidden_states * mask).sum(dim=1)
        return summed / mask.sum(dim=1).clamp(min=1e-9)

    def forward(self, features):
        reps = self.model(**features)
        return self.get_pooling(features, reps.last_hidden_state)

    def _encode(self, sentences_batch, device):
        self.eval()
        features = self.tokenizer(
            sentences_batch, return_tensors="pt", padding=True,
            truncation=True, max_length=self.max_length,
        )
        features = {k: v.to(device) for k, v in features.items()}
        with torch.no_grad():
            embeddings = self.forward(features)
            embeddings = embeddings.detach()
            embeddings = embeddings.cpu()
        return embeddings

    def encode(self, sentences, batch_size=32, device="cuda"):
        all_embeddings = []
        for start_index in range(0, len(sentences), batch_size):
            batch = sentences[start_index:start_index + batch_size]
            embeddings = self._encode(batch, device=device)
            all_embeddings.append(embeddings)
        return torch.cat(all_embeddings, dim=0)

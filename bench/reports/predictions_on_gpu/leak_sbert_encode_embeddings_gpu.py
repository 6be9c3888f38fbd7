# Source: https://github.com/huggingface/sentence-transformers/issues/522
# Report: encode() on about 4,000,000 texts kept every batch's embeddings on the GPU until the whole prediction finished, so GPU memory rose batch after batch and ran out.
# Shape: an encode() method sorts sentences by length, runs batches under no_grad, and extends one list with the per-batch CUDA embedding rows; they are only moved to the CPU after the loop.
# Expect: TML004 line 38
import numpy as np
import torch


class SentenceEncoder(torch.nn.Module):
    def __init__(self, tokenizer, transformer, pooling, device="cuda"):
        super().__init__()
        self.tokenizer = tokenizer
        self.transformer = transformer
        self.pooling = pooling
        self.device = device

    def tokenize(self, texts):
        return self.tokenizer(texts, padding=True, truncation=True, return_tensors="pt")

    def forward(self, features):
        token_embeddings = self.transformer(**features).last_hidden_state
        return self.pooling(token_embeddings, features["attention_mask"])

    def encode(self, sentences, batch_size=32, convert_to_numpy=True):
        self.eval()
        self.to(self.device)
        length_sorted_idx = np.argsort([-len(s) for s in sentences])
        sentences_sorted = [sentences[idx] for idx in length_sorted_idx]
        all_embeddings = []

        for start_index in range(0, len(sentences), batch_size):
            sentences_batch = sentences_sorted[start_index:start_index + batch_size]
            features = self.tokenize(sentences_batch)
            features = {k: v.to(self.device) for k, v in features.items()}
            with torch.no_grad():
                embeddings = self.forward(features)
                embeddings = torch.nn.functional.normalize(embeddings, p=2, dim=1)
                all_embeddings.extend(embeddings)  # expect: TML004

        all_embeddings = [all_embeddings[idx] for idx in np.argsort(length_sorted_idx)]
        if convert_to_numpy:
            return np.asarray([emb.cpu().numpy() for emb in all_embeddings])
        return torch.stack(all_embeddings)

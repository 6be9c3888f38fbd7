# Source: https://github.com/streamingfast/evmxo/blob/03201331f1cef36d1094bb6494916e593d2a3a38/serve/base_model.py
# Report: audit of a fastai-style stateful LSTM language model: LMModel keeps its LSTM state in self.h across forward calls and detaches it every call, so the carried state never links batches' graphs (the repo's correct shape)
# Shape: LMModel.forward feeds the old self.h to the LSTM and stores the new state as a tuple of .detach()ed tensors; the trainer resets once per epoch and uses a plain backward
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class LMModel(nn.Module):
    def __init__(self, vocab_sz, n_hidden, n_layers, bs, p=0.4):
        super().__init__()
        self.i_h = nn.Embedding(vocab_sz, n_hidden)
        self.rnn = nn.LSTM(n_hidden, n_hidden, n_layers, batch_first=True)
        self.drop = nn.Dropout(p)
        self.h_o = nn.Linear(n_hidden, vocab_sz)
        self.h_o.weight = self.i_h.weight  # tied embeddings
        self.shape = (n_layers, bs, n_hidden)
        self.h = None

    def forward(self, x):
        if self.h is None:
            self.h = tuple(torch.zeros(self.shape, device=x.device) for _ in range(2))
        raw, h = self.rnn(self.i_h(x), self.h)
        self.h = tuple(h_.detach() for h_ in h)
        out = self.drop(raw)
        return self.h_o(out), raw, out

    def reset(self):
        self.h = None


def lm_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


class LMTrainer:
    def __init__(self, model, lr=3e-3, device="cuda"):
        self.model = model.to(device)
        self.device = device
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
        self.history = {"loss": [], "ppl": []}

    def fit_epoch(self, stream_batches):
        self.model.train()
        self.model.reset()
        total, n = 0.0, 0
        for xb, yb in stream_batches:
            xb, yb = xb.to(self.device), yb.to(self.device)
            logits, _, _ = self.model(xb)
            loss = lm_loss(logits, yb)
            self.opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 0.4)
            self.opt.step()
            total += loss.item()
            n += 1
        self.history["loss"].append(total / max(n, 1))
        self.history["ppl"].append(float(torch.tensor(total / max(n, 1)).exp()))
        return self.history["loss"][-1]

    @torch.inference_mode()
    def predict_next(self, tokens):
        self.model.eval()
        logits, _, _ = self.model(tokens.to(self.device))
        return logits[:, -1].argmax(dim=-1).tolist()

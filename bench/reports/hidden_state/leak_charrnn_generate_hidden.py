# Source: https://discuss.pytorch.org/t/optimizing-cuda-memory-pipeline-for-rnn/3311
# Report: a char-RNN (Shakespeare) user saw GPU memory grow steadily and asked how to generate an indefinitely long sequence with a fixed amount of GPU memory; the answer: make the input or hidden volatile so the carried state has no autograd history
# Shape: sampling helper feeds each step's hidden state back into the next step with grad enabled, so every generated character extends one graph
# Expect: TML005 line 38
import torch
import torch.nn as nn
import torch.nn.functional as F


class CharRNN(nn.Module):
    def __init__(self, vocab_size, hidden_size=512, n_layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, n_layers)
        self.head = nn.Linear(hidden_size, vocab_size)
        self.n_layers, self.hidden_size = n_layers, hidden_size

    def init_hidden(self, batch, device):
        return torch.zeros(self.n_layers, batch, self.hidden_size, device=device)

    def forward(self, tokens, hidden):
        out, hidden = self.gru(self.embed(tokens), hidden)
        return self.head(out), hidden


def encode(text, stoi, device):
    return torch.tensor([stoi[c] for c in text], device=device).unsqueeze(1)


def generate(model, prime, stoi, itos, length=100000, temperature=0.8, device="cuda"):
    """Stream characters to stdout for as long as requested."""
    hidden = model.init_hidden(1, device)
    prime_ids = encode(prime, stoi, device)
    logits, hidden = model(prime_ids[:-1], hidden)
    inp = prime_ids[-1:]
    produced = []
    for step in range(length):
        logits, hidden = model(inp, hidden)  # expect: TML005
        probs = F.softmax(logits[-1, 0] / temperature, dim=-1)
        idx = torch.multinomial(probs, 1).item()
        produced.append(itos[idx])
        if len(produced) >= 500:
            print("".join(produced), end="", flush=True)
            produced.clear()
        inp = torch.tensor([[idx]], device=device)
    print("".join(produced))

# Source: https://github.com/spro/char-rnn.pytorch/blob/282bcb6b15ab3929d6a588b455cfc0f19f32add4/generate.py
# Report: audit: generate() primes and then samples predict_len characters one at a time, feeding the GRU/LSTM hidden state back every step with grad enabled and never detaching it; train.py calls it every print_every epochs, so each sample builds an autograd chain as long as the primer plus the generated text
# Shape: fixed: the same trainer; sample() still rebinds `hidden` from the decoder call on itself in both loops, but the method is decorated with @torch.no_grad(), so no step keeps a graph; train_chunk() keeps the intended per-chunk BPTT
# Expect: near-miss: must be silent
import string
import time

import torch
import torch.nn as nn

from model import CharRNN

ALPHABET = string.printable


def char_tensor(text):
    return torch.tensor([ALPHABET.index(c) for c in text], dtype=torch.long)


class CharRNNTrainer:
    def __init__(self, hidden_size=100, n_layers=2, cell="gru", lr=0.01, device="cuda"):
        self.device = device
        self.decoder = CharRNN(len(ALPHABET), hidden_size, len(ALPHABET), model=cell, n_layers=n_layers).to(device)
        self.optimizer = torch.optim.Adam(self.decoder.parameters(), lr=lr)
        self.criterion = nn.CrossEntropyLoss()

    def init_hidden(self, batch_size):
        hidden = self.decoder.init_hidden(batch_size)
        if isinstance(hidden, tuple):
            return tuple(h.to(self.device) for h in hidden)
        return hidden.to(self.device)

    def train_chunk(self, inp, target):
        self.decoder.train()
        hidden = self.init_hidden(inp.size(0))
        self.decoder.zero_grad()
        loss = 0
        for c in range(inp.size(1)):
            output, hidden = self.decoder(inp[:, c], hidden)
            loss += self.criterion(output, target[:, c])
        loss.backward()
        self.optimizer.step()
        return loss.item() / inp.size(1)

    @torch.no_grad()
    def sample(self, prime_str="Wh", predict_len=100, temperature=0.8):
        self.decoder.eval()
        hidden = self.init_hidden(1)
        prime = char_tensor(prime_str).unsqueeze(0).to(self.device)
        for p in range(len(prime_str) - 1):
            _, hidden = self.decoder(prime[:, p], hidden)
        inp = prime[:, -1]
        predicted = prime_str
        for _ in range(predict_len):
            output, hidden = self.decoder(inp, hidden)
            dist = output.data.view(-1).div(temperature).exp()
            top_i = torch.multinomial(dist, 1)[0].item()
            predicted += ALPHABET[top_i]
            inp = char_tensor(ALPHABET[top_i]).to(self.device)
        return predicted

    def fit(self, batches, n_epochs=2000, print_every=100):
        start, history = time.time(), []
        for epoch in range(1, n_epochs + 1):
            inp, target = next(batches)
            loss = self.train_chunk(inp.to(self.device), target.to(self.device))
            history.append(loss)
            if epoch % print_every == 0:
                print("[%.0fs (%d %d%%) %.4f]" % (time.time() - start, epoch, epoch / n_epochs * 100, loss))
                print(self.sample("Wh", 100), "\n")
        return history

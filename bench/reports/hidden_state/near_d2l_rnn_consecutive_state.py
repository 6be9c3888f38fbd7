# Source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/blob/01b7b11f6d95c1a737ace65ad941f4a82a42ce0a/code/d2lzh_pytorch/utils.py
# Report: with consecutive (adjacent) sampling the RNN state is carried from one minibatch to the next; the book detaches it (tuple for LSTM, tensor for GRU) before each forward, issue #146 argues about why (source note: train_and_predict_rnn_pytorch; discussed in https://github.com/ShusenTang/Dive-into-DL-PyTorch/issues/146)
# Shape: the book's own idiom: before each forward the carried state is detached, as a tuple of two tensors for an LSTM and as a single tensor otherwise
# Expect: near-miss: must be silent
import math
import time

import torch
from torch import nn

import d2lzh_pytorch as d2l


class RNNModel(nn.Module):
    def __init__(self, rnn_layer, vocab_size):
        super().__init__()
        self.rnn = rnn_layer
        self.hidden_size = rnn_layer.hidden_size * (2 if rnn_layer.bidirectional else 1)
        self.vocab_size = vocab_size
        self.dense = nn.Linear(self.hidden_size, vocab_size)
        self.num_layers = rnn_layer.num_layers

    def forward(self, inputs, state):
        X = d2l.to_onehot(inputs, self.vocab_size)
        Y, state = self.rnn(torch.stack(X), state)
        output = self.dense(Y.view(-1, Y.shape[-1]))
        return output, state


@torch.no_grad()
def predict_rnn_pytorch(prefix, num_chars, model, device, idx_to_char, char_to_idx):
    state = None
    output = [char_to_idx[prefix[0]]]
    for t in range(num_chars + len(prefix) - 1):
        X = torch.tensor([output[-1]], device=device).view(1, 1)
        Y, state = model(X, state)
        if t < len(prefix) - 1:
            output.append(char_to_idx[prefix[t + 1]])
        else:
            output.append(int(Y.argmax(dim=1).item()))
    return "".join(idx_to_char[i] for i in output)


def grad_clipping(params, theta, device):
    norm = torch.tensor([0.0], device=device)
    for param in params:
        norm += (param.grad.data ** 2).sum()
    norm = norm.sqrt().item()
    if norm > theta:
        for param in params:
            param.grad.data *= theta / norm


def train_and_predict_rnn_pytorch(model, device, corpus_indices, idx_to_char, char_to_idx,
                                  num_epochs, num_steps, lr, clipping_theta, batch_size,
                                  pred_period, pred_len, prefixes):
    loss = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.to(device)
    state = None
    for epoch in range(num_epochs):
        l_sum, n, start = 0.0, 0, time.time()
        data_iter = d2l.data_iter_consecutive(corpus_indices, batch_size, num_steps, device)
        for X, Y in data_iter:
            if state is not None:
                if isinstance(state, tuple):  # LSTM: (h, c)
                    state = (state[0].detach(), state[1].detach())
                else:
                    state = state.detach()
            (output, state) = model(X, state)
            y = torch.transpose(Y, 0, 1).contiguous().view(-1)
            l = loss(output, y.long())
            optimizer.zero_grad()
            l.backward()
            grad_clipping(list(model.parameters()), clipping_theta, device)
            optimizer.step()
            l_sum += l.item() * y.shape[0]
            n += y.shape[0]
        try:
            perplexity = math.exp(l_sum / n)
        except OverflowError:
            perplexity = float("inf")
        if (epoch + 1) % pred_period == 0:
            print("epoch %d, perplexity %f, time %.2f sec" % (epoch + 1, perplexity, time.time() - start))
            for prefix in prefixes:
                print(" -", predict_rnn_pytorch(prefix, pred_len, model, device, idx_to_char, char_to_idx))

# Source: https://github.com/kevinbird15/DeepSpeech-Fastai/blob/42563902a0c4c95081dacdb1e2c49532ad1f1f76/DeepSpeech-Fastai.ipynb
# Report: code of the DeepSpeech model posted in https://forums.fast.ai/t/deepspeech-architecture-help-requested/56206 ; removed the `to_detach(h, cpu=False)` that the notebook applies to the LSTM state kept in self.h
# Shape: DeepSpeech.forward feeds self.h into the LSTM and stores the returned (h, c) back on self.h, so every batch's state carries the previous batch's graph
# Expect: TML005 line 38

from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


class DeepSpeech(nn.Module):
    def __init__(self, context=5, bs=64):
        super(DeepSpeech, self).__init__()
        self.bs = bs
        self.context = context
        self.h = None
        self.h1 = nn.Linear(128 * 2 * self.context + 128, 2048)
        self.h2 = nn.Linear(2048, 2048)
        self.h3 = nn.Linear(2048, 2048)
        self.h4 = nn.LSTM(2048, 2048, batch_first=True)
        self.h5 = nn.Linear(2048, 29)  # a..z, space, apostrophe, blank
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        x = nn.Flatten(-2, -1)(x)
        x = self.h1(x).clamp(min=0, max=20)
        x = self.h2(x).clamp(min=0, max=20)
        x = self.h3(x).clamp(min=0, max=20)
        if self.h is None:
            pass
        elif self.h[0].shape[1] > x.size(0):
            self.h = tuple([each[:, :x.size(0), :] for each in self.h])
        elif self.h[0].shape[1] < x.size(0):
            self.h = None
        x, h = self.h4(x, self.h)
        self.h = h  # expect: TML005
        x = x.view(-1, 166, 1, 2048)
        x = x.sum(dim=2)
        x = self.h5(x).clamp(min=0, max=20)
        return self.softmax(x)


def ctc_loss(input, target, bs=64):
    """CTC loss wrapped so that it can be handed to a Learner as loss_func."""
    input = input.permute(1, 0, 2).log()
    ctc = nn.CTCLoss(blank=28, zero_infinity=True, reduction="sum")
    return ctc(input, target,
               input_lengths=torch.tensor([166] * input.size(1)),
               target_lengths=torch.tensor([100] * input.size(1)))


def fit_one_cycle(model, train_dl, loss_func, opt, epochs=1, device="cuda"):
    model.to(device)
    for epoch in range(epochs):
        model.train()
        running = 0.0
        for step, (xb, yb) in enumerate(train_dl):
            xb, yb = xb.to(device), yb.to(device)
            out = model(xb)
            loss = loss_func(out, yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
            running += loss.item()
            if step % 50 == 0:
                print(f"epoch {epoch} step {step} loss {running / (step + 1):.3f}")


if __name__ == "__main__":
    model = DeepSpeech(context=5, bs=5)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train_dl = torch.load("data/train_dl.pt", map_location="cpu")
    fit_one_cycle(model, train_dl, partial(ctc_loss, bs=5), opt, epochs=10)

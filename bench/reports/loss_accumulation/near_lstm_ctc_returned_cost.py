# Source: https://discuss.pytorch.org/t/gpu-memory-gets-filled/8190
# Report: the poster of the thread converts the returned CTC cost with cost.data.numpy() before accumulating it over batches; this variant keeps that conversion (with .cpu() for a CUDA cost)
# Shape: the helper still returns the attached cost, but the caller converts it with cost.data.cpu().numpy() before adding it to the running total (what the poster describes doing), so nothing outlives the batch but a NumPy scalar
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


class SpeechLSTM(nn.Module):
    def __init__(self, n_feats=40, n_hidden=200, n_labels=29):
        super().__init__()
        self.lstm = nn.LSTM(n_feats, n_hidden, num_layers=1, batch_first=True)
        self.proj = nn.Linear(n_hidden, n_labels)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.proj(out).log_softmax(-1)


model = SpeechLSTM().cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
ctc_loss = nn.CTCLoss(blank=0, zero_infinity=True)


def train_model(batch):
    opt.zero_grad()
    input = Variable(torch.from_numpy(batch[1]), requires_grad=True).cuda()
    target = torch.IntTensor(batch[0])
    input_length = torch.IntTensor(batch[2])
    target_length = torch.IntTensor(batch[3])
    output = model(input)
    output = output.transpose(0, 1)
    cost = ctc_loss(output, target.squeeze(0), input_length.squeeze(0),
                    target_length.squeeze(0))
    cost.backward()
    opt.step()
    return cost


def batches(features, transcripts):
    for feats, labels in zip(features, transcripts):
        yield (np.asarray([labels], dtype=np.int32),
               np.asarray(feats[None], dtype=np.float32),
               np.asarray([[feats.shape[0]]], dtype=np.int32),
               np.asarray([[len(labels)]], dtype=np.int32))


def run_epochs(features, transcripts, n_epochs=20):
    history = []
    for epoch in range(n_epochs):
        model.train()
        epoch_cost = 0.0
        n = 0
        for batch in batches(features, transcripts):
            cost = train_model(batch)
            epoch_cost += cost.data.cpu().numpy()
            n += 1
        history.append(float(epoch_cost) / max(n, 1))
        print("epoch", epoch, "ctc", history[-1])
    return history

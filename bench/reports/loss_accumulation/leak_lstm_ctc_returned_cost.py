# Source: https://discuss.pytorch.org/t/gpu-memory-gets-filled/8190
# Report: a one-layer, 200-unit LSTM trained with CTC at batch size 1 "fills an 8GB GPU"; the poster's train_model(batch) does backward/step and returns the graph-attached CTC cost to the caller (the poster then converts it with cost.data.numpy()); this leak variant has the caller sum the returned tensor itself
# Shape: the attached cost is returned from the helper and summed into epoch_cost in the caller's loop (no .data/.item() on the way), so every batch's CTC graph stays chained to the running total
# Expect: TML001 line 58
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
            epoch_cost += cost  # expect: TML001
            n += 1
        history.append(float(epoch_cost) / max(n, 1))
        print("epoch", epoch, "ctc", history[-1])
    return history

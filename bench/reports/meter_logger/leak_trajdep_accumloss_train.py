# Source: https://github.com/wei-mao-2019/LearnTrajDep/blob/master/main.py
# Report: LearnTrajDep train() ported to PyTorch >= 0.4 by dropping the .cpu().data.numpy()[0] (which fails on 0-dim tensors) and passing the loss tensors to AccumLoss directly
# Shape: AccumLoss.update() does self.sum += val; loss * n and m_err * n are graph-attached (m_err is computed after backward, its graph is never freed), so each meter chains every batch's graph for the whole epoch
# Expect: TML001 lines 91, 92
import numpy as np
import torch
import torch.nn as nn


class AccumLoss(object):
    def __init__(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val
        self.count += n
        self.avg = self.sum / self.count


def get_idct_matrix(N):
    k = np.arange(N)[:, None]
    i = np.arange(N)[None, :]
    w = np.where(k == 0, np.sqrt(1 / N), np.sqrt(2 / N))
    dct_m = w * np.cos(np.pi * (i + 0.5) * k / N)
    return np.linalg.inv(dct_m)


def idct(outputs, seq_len, dim_used_len, dct_n):
    idct_m = torch.from_numpy(get_idct_matrix(seq_len)).float().to(outputs.device)
    outputs_t = outputs.view(-1, dct_n).transpose(0, 1)
    return torch.matmul(idct_m[:, :dct_n], outputs_t).transpose(0, 1).contiguous().view(-1, dim_used_len, seq_len).transpose(1, 2)


def sen_loss(outputs, all_seq, dim_used, dct_n):
    n, seq_len, _ = all_seq.shape
    pred = idct(outputs, seq_len, len(dim_used), dct_n)
    return torch.mean(torch.sum(torch.abs(pred - all_seq[:, :, dim_used]), dim=2).view(-1))


def mpjpe_error(outputs, all_seq, input_n, dim_used, dct_n):
    n, seq_len, _ = all_seq.shape
    pred = idct(outputs, seq_len, len(dim_used), dct_n)[:, input_n:].reshape(-1, 3)
    targ = all_seq[:, input_n:, dim_used].reshape(-1, 3)
    return torch.mean(torch.norm(targ - pred, 2, 1))


class GCN(nn.Module):
    def __init__(self, node_n=48, dct_n=20, hidden=256):
        super().__init__()
        self.adj = nn.Parameter(torch.eye(node_n) + 0.01 * torch.randn(node_n, node_n))
        self.w1 = nn.Linear(dct_n, hidden)
        self.w2 = nn.Linear(hidden, dct_n)

    def forward(self, x):
        y = torch.tanh(self.adj @ self.w1(x))
        return x + self.adj @ self.w2(y)


def train(train_loader, model, optimizer, input_n=10, dct_n=20, max_norm=True, is_cuda=False, dim_used=()):
    dim_used = list(dim_used)
    t_l = AccumLoss()
    t_3d = AccumLoss()

    model.train()
    for i, (inputs, all_seq) in enumerate(train_loader):
        batch_size = inputs.shape[0]
        if batch_size == 1:
            continue
        if is_cuda:
            inputs = inputs.cuda().float()
            all_seq = all_seq.cuda(non_blocking=True).float()

        outputs = model(inputs)
        n = outputs.shape[0]
        outputs = outputs.view(n, -1)

        loss = sen_loss(outputs, all_seq, dim_used, dct_n)
        optimizer.zero_grad()
        loss.backward()
        if max_norm:
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1)
        optimizer.step()
        n, _, _ = all_seq.data.shape

        m_err = mpjpe_error(outputs, all_seq, input_n, dim_used, dct_n)

        t_l.update(loss * n, n)  # expect: TML001
        t_3d.update(m_err * n, n)  # expect: TML001
    return t_l.avg, t_3d.avg


if __name__ == "__main__":
    dim_used = list(range(48))
    data = [(torch.randn(16, 48, 20), torch.randn(16, 20, 66)) for _ in range(50)]
    model = GCN()
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    for epoch in range(50):
        print(train(data, model, opt, dim_used=dim_used))

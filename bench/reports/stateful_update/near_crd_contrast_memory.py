# Source: https://github.com/HobbitLong/RepDistiller/issues/37
# Report: CRD's ContrastMemory keeps a memory bank of embeddings in buffers and updates the rows of the current batch with momentum; the issue asks about the placement of the torch.no_grad() block around that update
# Shape: the repository's code: the momentum update of the memory rows runs inside torch.no_grad(), so the buffers only ever hold plain values and the score path reads them detached
# Expect: near-miss: must be silent
import math

import torch
from torch import nn


class ContrastMemory(nn.Module):
    """memory bank that supplies many negatives for the contrastive loss"""

    def __init__(self, input_size, output_size, K, T=0.07, momentum=0.5):
        super().__init__()
        self.K, self.T, self.momentum = K, T, momentum
        self.n_data = output_size
        self.Z_v1 = None
        self.Z_v2 = None
        stdv = 1.0 / math.sqrt(input_size / 3)
        self.register_buffer("memory_v1", torch.rand(output_size, input_size).mul_(2 * stdv).add_(-stdv))
        self.register_buffer("memory_v2", torch.rand(output_size, input_size).mul_(2 * stdv).add_(-stdv))

    def _scores(self, memory, v, idx):
        bsz, dim = v.shape
        weight = torch.index_select(memory, 0, idx.view(-1)).detach()
        weight = weight.view(bsz, self.K + 1, dim)
        out = torch.bmm(weight, v.view(bsz, dim, 1))
        return torch.exp(torch.div(out, self.T))

    def forward(self, v1, v2, y, idx=None):
        bsz = v1.size(0)
        if idx is None:
            idx = torch.randint(0, self.n_data, (bsz, self.K + 1), device=v1.device)
            idx.select(1, 0).copy_(y)
        out_v2 = self._scores(self.memory_v1, v2, idx)
        out_v1 = self._scores(self.memory_v2, v1, idx)
        if self.Z_v1 is None:
            self.Z_v1 = out_v1.mean().item() * self.n_data
            self.Z_v2 = out_v2.mean().item() * self.n_data
        out_v1 = torch.div(out_v1, self.Z_v1).contiguous()
        out_v2 = torch.div(out_v2, self.Z_v2).contiguous()

        # update memory
        with torch.no_grad():
            l_pos = torch.index_select(self.memory_v1, 0, y.view(-1))
            l_pos.mul_(self.momentum)
            l_pos.add_(torch.mul(v1, 1 - self.momentum))
            l_norm = l_pos.pow(2).sum(1, keepdim=True).pow(0.5)
            updated_v1 = l_pos.div(l_norm)
            self.memory_v1.index_copy_(0, y, updated_v1)

            ab_pos = torch.index_select(self.memory_v2, 0, y.view(-1))
            ab_pos.mul_(self.momentum)
            ab_pos.add_(torch.mul(v2, 1 - self.momentum))
            ab_norm = ab_pos.pow(2).sum(1, keepdim=True).pow(0.5)
            updated_v2 = ab_pos.div(ab_norm)
            self.memory_v2.index_copy_(0, y, updated_v2)

        return out_v1, out_v2


def train_distill(student, teacher, embed_s, embed_t, memory, criterion, loader, optimizer):
    student.train()
    teacher.eval()
    for images, target, index in loader:
        images, target, index = images.cuda(), target.cuda(), index.cuda()
        with torch.no_grad():
            feat_t = teacher(images)
        feat_s = student(images)
        out_s, out_t = memory(embed_s(feat_s), embed_t(feat_t), index)
        loss = criterion(out_s) + criterion(out_t)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

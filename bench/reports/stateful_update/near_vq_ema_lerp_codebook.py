# Source: https://github.com/lucidrains/vector-quantize-pytorch/issues/56
# Report: after upgrading to 1.6.14, training an encoder + residual VQ + decoder hit OOM after several iterations; the fix went back to an in-place EMA applied to the buffers' .data
# Shape: fixed variant: ema_inplace() mutates buffer.data in place and returns nothing, so the EMA buffers never enter the encoder's graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


def ema_inplace(old, new, decay):
    is_mps = str(old.device) == "mps"
    if not is_mps:
        old.lerp_(new, 1 - decay)
    else:
        old.mul_(decay).add_(new * (1 - decay))


def laplace_smoothing(x, n_categories, eps=1e-5):
    return (x + eps) / (x.sum(dim=-1, keepdim=True) + n_categories * eps)


class EuclideanCodebook(nn.Module):
    def __init__(self, dim, codebook_size, decay=0.8, eps=1e-5):
        super().__init__()
        self.decay = decay
        self.eps = eps
        self.codebook_size = codebook_size
        embed = torch.randn(codebook_size, dim)
        self.register_buffer("embed", embed)
        self.register_buffer("embed_avg", embed.clone())
        self.register_buffer("cluster_size", torch.zeros(codebook_size))

    def forward(self, x):
        flatten = x.reshape(-1, x.shape[-1]).float()
        dist = -torch.cdist(flatten, self.embed, p=2)
        embed_ind = dist.argmax(dim=-1)
        embed_onehot = F.one_hot(embed_ind, self.codebook_size).type(flatten.dtype)
        quantize = F.embedding(embed_ind, self.embed).view_as(x)

        if self.training:
            cluster_size = embed_onehot.sum(dim=0)
            ema_inplace(self.cluster_size.data, cluster_size, self.decay)

            embed_sum = flatten.t() @ embed_onehot
            ema_inplace(self.embed_avg.data, embed_sum.t(), self.decay)

            smoothed = laplace_smoothing(self.cluster_size, self.codebook_size, self.eps) * self.cluster_size.sum()
            self.embed.data.copy_(self.embed_avg / smoothed.unsqueeze(-1))

        return quantize, embed_ind.view(x.shape[:-1])


class VectorQuantize(nn.Module):
    def __init__(self, dim, codebook_size, commitment_weight=1.0, **kwargs):
        super().__init__()
        self._codebook = EuclideanCodebook(dim, codebook_size, **kwargs)
        self.commitment_weight = commitment_weight

    def forward(self, x):
        quantize, embed_ind = self._codebook(x)
        commit_loss = F.mse_loss(quantize.detach(), x) * self.commitment_weight
        quantize = x + (quantize - x).detach()
        return quantize, embed_ind, commit_loss


def train_step(model, batch, optimizer):
    z = model.encoder(batch)
    quantized, _, commit_loss = model.vq(z)
    recon = model.decoder(quantized)
    loss = F.mse_loss(recon, batch) + commit_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()

# Source: https://github.com/lucidrains/vector-quantize-pytorch/pull/57
# Report: with a learnable codebook and affine parameters, the mean/variance EMA buffers kept their autograd graph through the recursive EMA update until OOM; the fix detaches the new statistic before registering it
# Shape: fixed variant: the same getattr/register_buffer EMA helper, but the incoming statistic is detached on both the first registration and the blend
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


def exists(v):
    return v is not None


class AffineCodebook(nn.Module):
    def __init__(self, dim, codebook_size, batch_decay=0.99, codebook_decay=0.9):
        super().__init__()
        self.embed = nn.Parameter(torch.randn(codebook_size, dim))  # learnable codebook
        self.batch_decay = batch_decay
        self.codebook_decay = codebook_decay
        self.register_buffer("batch_mean", None)
        self.register_buffer("batch_variance", None)
        self.register_buffer("codebook_mean", None)
        self.register_buffer("codebook_variance", None)

    @torch.jit.ignore
    def update_with_decay(self, buffer_name, new_value, decay):
        old_value = getattr(self, buffer_name)

        if not exists(old_value):
            self.register_buffer(buffer_name, new_value.detach())
            return

        value = old_value * decay + new_value.detach() * (1 - decay)
        self.register_buffer(buffer_name, value)

    def update_affine(self, data, embed):
        self.update_with_decay("codebook_mean", embed.mean(dim=0, keepdim=True), self.codebook_decay)
        self.update_with_decay("codebook_variance", embed.var(dim=0, unbiased=False, keepdim=True), self.codebook_decay)
        self.update_with_decay("batch_mean", data.mean(dim=0, keepdim=True), self.batch_decay)
        self.update_with_decay("batch_variance", data.var(dim=0, unbiased=False, keepdim=True), self.batch_decay)

    def forward(self, x):
        flat = x.reshape(-1, x.shape[-1])
        embed = self.embed
        if self.training:
            self.update_affine(flat, embed)
        codebook_std = self.codebook_variance.clamp(min=1e-5).sqrt()
        batch_std = self.batch_variance.clamp(min=1e-5).sqrt()
        embed = (embed - self.codebook_mean) * (batch_std / codebook_std) + self.batch_mean

        dist = torch.cdist(flat, embed)
        ind = dist.argmin(dim=-1)
        quantize = F.embedding(ind, embed).view_as(x)
        commit = F.mse_loss(quantize, x.detach()) + F.mse_loss(x, quantize.detach())
        quantize = x + (quantize - x).detach()
        return quantize, ind.view(x.shape[:-1]), commit


def train_vq(encoder, codebook, decoder, loader, optimizer, steps):
    for step, (imgs, _) in zip(range(steps), loader):
        imgs = imgs.cuda()
        z = encoder(imgs)
        zq, codes, commit = codebook(z)
        recon = decoder(zq)
        loss = F.mse_loss(recon, imgs) + 0.25 * commit
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f} used codes {codes.unique().numel()}")

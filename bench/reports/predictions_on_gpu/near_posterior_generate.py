# Source: https://github.com/scverse/scvi-tools/pull/469
# Report: Posterior.generate() stored every minibatch of observed counts and posterior-predictive samples on the GPU and concatenated them there, using a lot of GPU memory (issue #468)
# Shape: same @torch.no_grad() method; each minibatch is moved to the CPU before it is appended, and the concatenation happens on the CPU
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import distributions


class Posterior:
    def __init__(self, model, data_loader, use_cuda=True):
        self.model = model
        self.data_loader = data_loader
        self.use_cuda = use_cuda

    def to_cuda(self, tensors):
        return [t.cuda() for t in tensors] if self.use_cuda else tensors

    def __iter__(self):
        return map(self.to_cuda, iter(self.data_loader))

    @torch.no_grad()
    def generate(self, n_samples=100, genes=None):
        x_old = []
        x_new = []
        for tensors in self:
            sample_batch, _, _, batch_index, labels = tensors
            outputs = self.model.inference(sample_batch, batch_index=batch_index, y=labels, n_samples=n_samples)
            px_r = outputs["px_r"]
            px_rate = outputs["px_rate"]
            if self.model.reconstruction_loss == "poisson":
                rate = torch.clamp(px_rate, max=1e8)
            else:
                p = px_rate / (px_rate + px_r)
                rate = distributions.Gamma(concentration=px_r, rate=(1 - p) / p).sample()
                rate = torch.clamp(rate, max=1e8)
            gene_expressions = distributions.Poisson(rate).sample()
            if self.model.reconstruction_loss == "zinb":
                is_zero = torch.sigmoid(-outputs["px_dropout"]) < torch.rand_like(rate)
                gene_expressions[is_zero] = 0
            gene_expressions = gene_expressions.permute([1, 2, 0])
            x_old.append(sample_batch.cpu())
            x_new.append(gene_expressions.cpu())

        x_old = torch.cat(x_old)
        x_new = torch.cat(x_new)
        if genes is not None:
            gene_ids = np.asarray(genes)
            x_old = x_old[:, gene_ids]
            x_new = x_new[:, gene_ids, :]
        return x_new.numpy(), x_old.numpy()

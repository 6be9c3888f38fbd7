# Source: https://github.com/PreferredAI/cornac/blob/031f32baab7e1acd82180cb49d925b5f67c91ba8/cornac/models/gru4rec/recom_gru4rec.py
# Report: cornac's GRU4Rec fit() carries the session-parallel GRU hidden state H across mini-batches; the audited code resets finished sessions and calls H[i].detach_() before each step (PR https://github.com/PreferredAI/cornac/pull/574). This near-miss keeps that detach.
# Shape: same loop; H[i].detach_() cuts every carried hidden tensor from the previous batch graph before the model call rebinds H, so nothing chains across batches.
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import nn
from tqdm import trange

from .gru4rec import io_iter


class GRU4RecModel(nn.Module):
    def __init__(self, n_items, layers=(100,), dropout_p_embed=0.0, dropout_p_hidden=0.0):
        super().__init__()
        self.layers = list(layers)
        self.DE = nn.Dropout(dropout_p_embed)
        self.G = nn.ModuleList()
        self.D = nn.ModuleList()
        n_input = self.layers[-1]
        for i, size in enumerate(self.layers):
            self.G.append(nn.GRUCell(self.layers[i - 1] if i > 0 else n_input, size))
            self.D.append(nn.Dropout(dropout_p_hidden))
        self.Wy = nn.Embedding(n_items, self.layers[-1], sparse=True)
        self.By = nn.Embedding(n_items, 1, sparse=True)

    def hidden_step(self, X, H, training=False):
        new_H = []
        for i in range(len(self.layers)):
            X = self.G[i](X, H[i])
            if training:
                X = self.D[i](X)
            new_H.append(X)
        return X, new_H

    def forward(self, X, H, Y, training=False):
        E = self.Wy(X)
        O = self.Wy(Y)
        B = self.By(Y)
        if training:
            E = self.DE(E)
        Xh, H = self.hidden_step(E, H, training=training)
        R = torch.mm(Xh, O.T) + B.T
        return R, H

    def xe_loss_with_softmax(self, O, Y, M):
        X = torch.exp(O - O.max(dim=1, keepdim=True)[0])
        X = X / X.sum(dim=1, keepdim=True)
        return -torch.sum(torch.log(torch.diag(X) + 1e-24))


class GRU4Rec:
    def __init__(self, layers=(100,), batch_size=512, n_epochs=10, learning_rate=0.05,
                 n_sample=2048, sample_alpha=0.5, device="cuda", seed=None):
        self.layers = list(layers)
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.learning_rate = learning_rate
        self.n_sample = n_sample
        self.sample_alpha = sample_alpha
        self.device = device
        self.rng = np.random.default_rng(seed)

    def fit(self, train_set):
        self.train_set = train_set
        self.model = GRU4RecModel(train_set.total_items, layers=self.layers).to(self.device)
        opt = torch.optim.Adagrad(self.model.parameters(), lr=self.learning_rate)
        progress_bar = trange(1, self.n_epochs + 1, desc="GRU4Rec")
        for _ in progress_bar:
            H = [torch.zeros((self.batch_size, size), device=self.device) for size in self.layers]
            total_loss, cnt = 0.0, 0
            for inc, (in_iids, out_iids, start_mask, valid_id) in enumerate(
                io_iter(s_iter=train_set.s_iter, uir_tuple=train_set.uir_tuple,
                        n_sample=self.n_sample, sample_alpha=self.sample_alpha,
                        rng=self.rng, batch_size=self.batch_size, shuffle=True)
            ):
                for i in range(len(H)):
                    H[i][np.nonzero(start_mask)[0], :] = 0
                    H[i].detach_()
                    H[i] = H[i][valid_id]
                in_iids = torch.tensor(in_iids, requires_grad=False, device=self.device)
                out_iids = torch.tensor(out_iids, requires_grad=False, device=self.device)
                self.model.zero_grad()
                R, H = self.model(in_iids, H, out_iids, training=True)
                L = self.model.xe_loss_with_softmax(R, out_iids, len(in_iids)) / len(in_iids)
                L.backward()
                opt.step()
                total_loss += L.cpu().detach().numpy() * len(in_iids)
                cnt += len(in_iids)
                if inc % 10 == 0:
                    progress_bar.set_postfix(loss=(total_loss / cnt))
        return self

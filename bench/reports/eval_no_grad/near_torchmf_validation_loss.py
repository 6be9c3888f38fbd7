# Source: https://github.com/EthanRosenthal/torchmf/blob/0eba615c1b4fc2e2147d345f3f5ddc89889b0906/torchmf.py
# Report: audited repository code: BasePipeline._validation_loss switches the matrix-factorization model to eval() and runs the test loader forward with autograd still on (no volatile/no_grad), so every validation batch builds a graph for a backward that never comes
# Shape: the same modernised torchmf pipeline with the fix: _validation_loss is decorated with @torch.no_grad(), so the eval forward builds no graph; the loss sum uses .item()
# Expect: near-miss: must be silent
import collections

import torch
from torch import nn
import torch.utils.data as data
from tqdm import tqdm


class BaseModule(nn.Module):
    """Explicit matrix factorization: biases + dot product of embeddings."""

    def __init__(self, n_users, n_items, n_factors=40, dropout_p=0.0,
                 loss_function=nn.MSELoss(reduction='sum')):
        super().__init__()
        self.user_biases = nn.Embedding(n_users, 1)
        self.item_biases = nn.Embedding(n_items, 1)
        self.user_embeddings = nn.Embedding(n_users, n_factors)
        self.item_embeddings = nn.Embedding(n_items, n_factors)
        self.dropout = nn.Dropout(p=dropout_p)
        self.loss_function = loss_function

    def forward(self, users, items):
        ues = self.user_embeddings(users)
        uis = self.item_embeddings(items)
        preds = (self.user_biases(users) + self.item_biases(items)).squeeze(1)
        preds = preds + (self.dropout(ues) * self.dropout(uis)).sum(1)
        return preds


class BasePipeline:
    def __init__(self, train_interactions, test_interactions=None, model=BaseModule,
                 n_factors=40, dropout_p=0.02, lr=0.01, weight_decay=0.0,
                 n_epochs=10, verbose=False, device='cuda'):
        self.device = torch.device(device)
        self.train_interactions = train_interactions
        self.test_interactions = test_interactions
        self.train_loader = data.DataLoader(train_interactions, batch_size=1024, shuffle=True)
        if test_interactions is not None:
            self.test_loader = data.DataLoader(test_interactions, batch_size=1024, shuffle=True)
        self.n_epochs = n_epochs
        self.model = model(train_interactions.n_users, train_interactions.n_items,
                           n_factors=n_factors, dropout_p=dropout_p).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr, weight_decay=weight_decay)
        self.losses = collections.defaultdict(list)
        self.verbose = verbose

    def fit(self):
        for epoch in range(self.n_epochs):
            self.losses['train'].append(self._fit_epoch())
            row = 'Epoch: {0:^3} | {1:^10.5f} | '.format(epoch, self.losses['train'][-1])
            if self.test_interactions is not None:
                self.losses['test'].append(self._validation_loss())
                row += '{0:^10.5f}'.format(self.losses['test'][-1])
            self.losses['epoch'].append(epoch)
            if self.verbose:
                print(row)

    def _fit_epoch(self):
        self.model.train()
        total_loss = 0.0
        for (row, col), val in tqdm(self.train_loader):
            row, col, val = row.to(self.device), col.to(self.device), val.to(self.device)
            self.optimizer.zero_grad()
            preds = self.model(row, col)
            loss = self.model.loss_function(preds, val)
            loss.backward()
            self.optimizer.step()
            total_loss += loss.item()
        return total_loss / len(self.train_interactions)

    @torch.no_grad()
    def _validation_loss(self):
        self.model.eval()
        total_loss = 0.0
        for (row, col), val in self.test_loader:
            row, col, val = row.to(self.device), col.to(self.device), val.to(self.device)
            preds = self.model(row, col)
            loss = self.model.loss_function(preds, val)
            total_loss += loss.item()
        return total_loss / len(self.test_interactions)

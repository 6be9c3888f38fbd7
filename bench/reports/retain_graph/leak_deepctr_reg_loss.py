# Source: https://github.com/shenweichen/DeepCTR-Torch/issues/69
# Report: BaseModel.fit called total_loss.backward(retain_graph=True) every batch because total_loss added self.reg_loss, a regularization term built once from the weights in __init__; maintainers later removed retain_graph by computing the penalty per step.
# Shape: the graph-attached penalty lives on self (built once, reused by every batch) and each batch's backward retains its graph.
# Expect: TML006 line 57
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm


class BaseModel(nn.Module):
    def __init__(self, feature_sizes, embedding_dim=8, l2_reg_embedding=1e-5, device="cpu"):
        super().__init__()
        self.device = device
        self.embedding_dict = nn.ModuleDict({
            name: nn.Embedding(size, embedding_dim) for name, size in feature_sizes.items()
        })
        self.dnn = nn.Sequential(nn.Linear(len(feature_sizes) * embedding_dim, 64),
                                 nn.ReLU(), nn.Linear(64, 1))
        self.reg_loss = torch.zeros((1,), device=device)
        self.aux_loss = torch.zeros((1,), device=device)
        self.add_regularization_loss(self.embedding_dict.parameters(), l2_reg_embedding)
        self.to(device)

    def add_regularization_loss(self, weight_list, weight_decay):
        reg = sum(torch.sum(w * w) for w in weight_list)
        self.reg_loss = self.reg_loss + weight_decay * reg

    def forward(self, x):
        embs = [emb(x[:, i].long()) for i, emb in enumerate(self.embedding_dict.values())]
        return torch.sigmoid(self.dnn(torch.cat(embs, dim=-1)))

    def compile(self, optimizer, loss=F.binary_cross_entropy):
        self.optim = optimizer
        self.loss_func = loss

    def fit(self, x, y, batch_size=256, epochs=1, verbose=1):
        train_loader = DataLoader(TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
                                  shuffle=True, batch_size=batch_size)
        model = self.train()
        loss_func = self.loss_func
        optim = self.optim
        for epoch in range(epochs):
            loss_epoch = 0
            total_loss_epoch = 0
            with tqdm(enumerate(train_loader), disable=verbose != 1) as t:
                for index, (x_train, y_train) in t:
                    xb = x_train.to(self.device).float()
                    yb = y_train.to(self.device).float()
                    y_pred = model(xb).squeeze()
                    optim.zero_grad()
                    loss = loss_func(y_pred, yb.squeeze(), reduction="sum")
                    total_loss = loss + self.reg_loss + self.aux_loss
                    loss_epoch += loss.item()
                    total_loss_epoch += total_loss.item()
                    total_loss.backward(retain_graph=True)  # expect: TML006
                    optim.step()
            print(f"Epoch {epoch + 1} - loss: {loss_epoch / len(train_loader.dataset):.4f} "
                  f"- total: {total_loss_epoch / len(train_loader.dataset):.4f}")

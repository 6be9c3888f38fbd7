# Source: https://github.com/nzc/dnn_ctr/blob/12599ae248ae92107b1c0616fd10e3445c7fff02/model/DeepFM.py
# Report: audited code: DeepFM.eval_by_batch() switches to self.eval() and scores the whole train/valid set in 16384-row batches every epoch, with no torch.no_grad(), so each batch's forward saves the embedding/MLP activations for a backward that never comes.
# Shape: same helper names (fit, eval_by_batch, eval_metric); losses are read with .item() and predictions with .data.numpy(), so only the forward pass itself lacks a grad-disabled context.
# Expect: TML003 line 80
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score


class DeepFM(nn.Module):
    def __init__(self, field_size, feature_sizes, embedding_size=4, deep_layers=(32, 32),
                 n_epochs=64, batch_size=256, learning_rate=0.003, use_cuda=True):
        super().__init__()
        self.field_size = field_size
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.use_cuda = use_cuda
        self.eval_metric = roc_auc_score
        self.fm_first_order_embeddings = nn.ModuleList([nn.Embedding(s, 1) for s in feature_sizes])
        self.fm_second_order_embeddings = nn.ModuleList(
            [nn.Embedding(s, embedding_size) for s in feature_sizes])
        self.linear_1 = nn.Linear(field_size * embedding_size, deep_layers[0])
        self.linear_2 = nn.Linear(deep_layers[0], deep_layers[1])

    def forward(self, Xi, Xv):
        first = torch.cat([(torch.sum(emb(Xi[:, i, :]), 1).t() * Xv[:, i]).t()
                           for i, emb in enumerate(self.fm_first_order_embeddings)], 1)
        second_emb = torch.stack([(torch.sum(emb(Xi[:, i, :]), 1).t() * Xv[:, i]).t()
                                  for i, emb in enumerate(self.fm_second_order_embeddings)], 1)
        second = (second_emb.sum(1) ** 2 - (second_emb ** 2).sum(1)) * 0.5
        x_deep = F.relu(self.linear_1(second_emb.flatten(1)))
        x_deep = F.relu(self.linear_2(x_deep))
        return torch.sum(first, 1) + torch.sum(second, 1) + torch.sum(x_deep, 1)

    def fit(self, Xi_train, Xv_train, y_train, Xi_valid, Xv_valid, y_valid):
        Xi_train = np.array(Xi_train).reshape((-1, self.field_size, 1))
        Xv_train, y_train = np.array(Xv_train), np.array(y_train)
        Xi_valid = np.array(Xi_valid).reshape((-1, self.field_size, 1))
        Xv_valid, y_valid = np.array(Xv_valid), np.array(y_valid)
        x_size, x_valid_size = Xi_train.shape[0], Xi_valid.shape[0]
        optimizer = torch.optim.Adam(self.parameters(), lr=self.learning_rate)
        criterion = F.binary_cross_entropy_with_logits
        valid_result = []
        for epoch in range(self.n_epochs):
            model = self.train()
            for i in range(x_size // self.batch_size + 1):
                offset, end = i * self.batch_size, min(x_size, (i + 1) * self.batch_size)
                if offset == end:
                    break
                batch_xi = torch.LongTensor(Xi_train[offset:end]).cuda()
                batch_xv = torch.FloatTensor(Xv_train[offset:end]).cuda()
                batch_y = torch.FloatTensor(y_train[offset:end]).cuda()
                optimizer.zero_grad()
                loss = criterion(model(batch_xi, batch_xv), batch_y)
                loss.backward()
                optimizer.step()
            valid_loss, valid_eval = self.eval_by_batch(Xi_valid, Xv_valid, y_valid, x_valid_size)
            valid_result.append(valid_eval)
            print('[%d] loss: %.3f metric: %.3f' % (epoch + 1, valid_loss, valid_eval))
        return valid_result

    def eval_by_batch(self, Xi, Xv, y, x_size):
        total_loss = 0.0
        y_pred = []
        batch_size = 16384
        criterion = F.binary_cross_entropy_with_logits
        model = self.eval()
        for i in range(x_size // batch_size + 1):
            offset, end = i * batch_size, min(x_size, (i + 1) * batch_size)
            if offset == end:
                break
            batch_xi = torch.LongTensor(Xi[offset:end])
            batch_xv = torch.FloatTensor(Xv[offset:end])
            batch_y = torch.FloatTensor(y[offset:end])
            if self.use_cuda:
                batch_xi, batch_xv, batch_y = batch_xi.cuda(), batch_xv.cuda(), batch_y.cuda()
            outputs = model(batch_xi, batch_xv)  # expect: TML003
            pred = torch.sigmoid(outputs).cpu()
            y_pred.extend(pred.data.numpy())
            loss = criterion(outputs, batch_y)
            total_loss += loss.item() * (end - offset)
        total_metric = self.eval_metric(y, y_pred)
        return total_loss / x_size, total_metric

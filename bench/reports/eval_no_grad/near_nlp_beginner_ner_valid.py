# Source: https://github.com/Alic-yuan/nlp-beginner-finish/blob/091bd1d74d93b74617f0b1421a51ec6dbfe95ae9/task4/main.py
# Report: audited: ChineseNER.train runs a per-epoch validation pass (model.eval(), BiLSTM-CRF decode and model.log_likelihood on every valid batch) with autograd enabled; this variant is the fix, with the validation function decorated @torch.no_grad()
# Shape: no longer kept: the same loop under a no_grad-decorated method; aver_loss += loss.item() and python label lists only; the training loop (backward every batch, .item() for printing) is unchanged
# Expect: near-miss: must be silent
import pickle
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset
from torchcrf import CRF
from sklearn.metrics import classification_report, f1_score

from config import opt

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class NERLSTM_CRF(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, dropout, word2id, tag2id):
        super().__init__()
        self.word_embeds = nn.Embedding(len(word2id) + 1, embedding_dim)
        self.dropout = nn.Dropout(dropout)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1, bidirectional=True)
        self.hidden2tag = nn.Linear(hidden_dim, len(tag2id))
        self.crf = CRF(len(tag2id))

    def _emissions(self, x):
        embedding = self.word_embeds(x.transpose(0, 1))
        outputs, _ = self.lstm(embedding)
        return self.hidden2tag(self.dropout(outputs))

    def forward(self, x):
        return self.crf.decode(self._emissions(x))

    def log_likelihood(self, x, tags):
        return -self.crf(self._emissions(x), tags.transpose(0, 1))


class NERDataset(Dataset):
    def __init__(self, X, Y):
        self.data = [{'x': X[i], 'y': Y[i]} for i in range(X.shape[0])]

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return len(self.data)


class ChineseNER(object):
    def __init__(self, model, train_dataloader, valid_dataloader):
        self.model = model.to(device)
        self.train_dataloader = train_dataloader
        self.valid_dataloader = valid_dataloader
        self.optimizer = optim.Adam(model.parameters(), lr=opt.lr, weight_decay=opt.weight_decay)

    @torch.no_grad()
    def evaluate_epoch(self):
        model = self.model
        aver_loss = 0
        preds, labels = [], []
        for index, batch in enumerate(self.valid_dataloader):
            model.eval()
            val_x = batch['x'].to(device)
            val_y = batch['y'].to(device)
            predict = model(val_x)
            loss = model.log_likelihood(val_x, val_y)
            aver_loss += loss.item()
            leng = [[t for t in row if t > 0] for row in val_y.tolist()]
            for i, path in enumerate(predict):
                preds += path[:len(leng[i])]
            for i, row in enumerate(val_y.tolist()):
                labels += row[:len(leng[i])]
        aver_loss /= (len(self.valid_dataloader) * opt.batch_size)
        print(classification_report(labels, preds))
        return aver_loss, f1_score(labels, preds, average='macro')

    def train(self):
        model = self.model
        for epoch in range(opt.max_epoch):
            model.train()
            for index, batch in enumerate(self.train_dataloader):
                self.optimizer.zero_grad()
                X = batch['x'].to(device)
                y = batch['y'].to(device)
                loss = model.log_likelihood(X, y)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(parameters=model.parameters(), max_norm=10)
                self.optimizer.step()
                if index % 200 == 0:
                    print('epoch:%04d,------------loss:%f' % (epoch, loss.item()))
            self.evaluate_epoch()
            torch.save(model.state_dict(), './model/params.pkl')

# Source: https://github.com/Zhenye-Na/DA-RNN/issues/30
# Report: "no eval() or no_grad() called during testing": DA_RNN.test() runs the encoder and decoder over the whole train/test range every 10 epochs with autograd on
# Shape: test() (an evaluation method) batches the series in a while loop and calls self.Encoder / self.Decoder with grad enabled; the predictions are read through .data, but each batch still builds and saves a full graph
# Expect: TML003 lines 89, 90
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Encoder(nn.Module):
    def __init__(self, input_size, hidden, T):
        super().__init__()
        self.lstm = nn.LSTM(input_size=input_size, hidden_size=hidden, batch_first=True)
        self.attn = nn.Linear(input_size, input_size)

    def forward(self, X):
        weights = torch.softmax(self.attn(X), dim=-1)
        x_tilde = weights * X
        encoded, _ = self.lstm(x_tilde)
        return weights, encoded


class Decoder(nn.Module):
    def __init__(self, enc_hidden, dec_hidden):
        super().__init__()
        self.lstm = nn.LSTM(input_size=enc_hidden + 1, hidden_size=dec_hidden, batch_first=True)
        self.fc = nn.Linear(dec_hidden, 1)

    def forward(self, encoded, y_prev):
        out, _ = self.lstm(torch.cat([encoded, y_prev.unsqueeze(-1)], dim=-1))
        return self.fc(out[:, -1])


class DARNN(nn.Module):
    def __init__(self, X, y, T, enc_hidden, dec_hidden, batch_size, lr, epochs):
        super().__init__()
        self.X, self.y, self.T = X, y, T
        self.batch_size, self.epochs = batch_size, epochs
        self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self.Encoder = Encoder(X.shape[1], enc_hidden, T).to(self.device)
        self.Decoder = Decoder(enc_hidden, dec_hidden).to(self.device)
        self.criterion = nn.MSELoss()
        self.enc_opt = optim.Adam(self.Encoder.parameters(), lr=lr)
        self.dec_opt = optim.Adam(self.Decoder.parameters(), lr=lr)
        self.train_timesteps = int(X.shape[0] * 0.7)

    def _tensor(self, a):
        return torch.from_numpy(a).float().to(self.device)

    def train_forward(self, X, y_prev, y_gt):
        self.enc_opt.zero_grad()
        self.dec_opt.zero_grad()
        _, encoded = self.Encoder(self._tensor(X))
        y_pred = self.Decoder(encoded, self._tensor(y_prev))
        loss = self.criterion(y_pred, self._tensor(y_gt).view(-1, 1))
        loss.backward()
        self.enc_opt.step()
        self.dec_opt.step()
        return loss.item()

    def _window(self, start, n):
        X = np.stack([self.X[s:s + self.T - 1] for s in range(start, start + n)])
        y_hist = np.stack([self.y[s:s + self.T - 1] for s in range(start, start + n)])
        return X, y_hist

    def train_model(self):
        for epoch in range(self.epochs):
            losses = []
            for idx in range(0, self.train_timesteps - self.T, self.batch_size):
                n = min(self.batch_size, self.train_timesteps - self.T - idx)
                X, y_prev = self._window(idx, n)
                y_gt = self.y[idx + self.T:idx + self.T + n]
                losses.append(self.train_forward(X, y_prev, y_gt))
            if epoch % 10 == 0:
                print("epoch", epoch, "loss", np.mean(losses))
                train_pred = self.test(on_train=True)
                test_pred = self.test(on_train=False)
                print(len(train_pred), len(test_pred))

    def test(self, on_train=False):
        offset = 0 if on_train else self.train_timesteps - self.T
        n_total = self.train_timesteps - self.T + 1 if on_train else self.X.shape[0] - self.train_timesteps
        y_pred = np.zeros(n_total)
        i = 0
        while i < len(y_pred):
            n = min(self.batch_size, len(y_pred) - i)
            X, y_history = self._window(offset + i, n)
            _, encoded = self.Encoder(self._tensor(X))  # expect: TML003
            out = self.Decoder(encoded, self._tensor(y_history))  # expect: TML003
            y_pred[i:i + n] = out.cpu().data.numpy()[:, 0]
            i += self.batch_size
        return y_pred

# Source: https://github.com/zalandoresearch/pytorch-dilated-rnn/issues/12
# Report: a forecasting user made the DRNN layers reuse their allocated hidden memory tensors across batches, which then forced backward(retain_graph=True) in training
# Shape: DRNN.forward writes each layer's new hidden state back into self.hidden_memory[i] from its previous value (never detached); the train loop backs up with retain_graph=True
# Expect: TML005 line 57; TML006 line 96

import torch
import torch.nn as nn


class DRNN(nn.Module):
    """Stack of dilated GRU layers that keeps its hidden memory between calls (forecasting variant)."""

    def __init__(self, n_input, n_hidden, n_layers, dropout=0.0, cell_type='GRU', batch_first=True):
        super(DRNN, self).__init__()
        self.dilations = [2 ** i for i in range(n_layers)]
        self.cell_type = cell_type
        self.batch_first = batch_first
        self.n_hidden = n_hidden
        cell = nn.GRU if cell_type == 'GRU' else nn.RNN
        layers = []
        for i in range(n_layers):
            c = cell(n_input if i == 0 else n_hidden, n_hidden, dropout=dropout)
            layers.append(c)
        self.cells = nn.Sequential(*layers)
        self.hidden_memory = [None] * n_layers

    def _pad_inputs(self, inputs, n_steps, rate):
        if n_steps % rate != 0:
            dilated_steps = n_steps // rate + 1
            zeros = torch.zeros(dilated_steps * rate - n_steps, inputs.size(1), inputs.size(2),
                                device=inputs.device)
            inputs = torch.cat((inputs, zeros))
        else:
            dilated_steps = n_steps // rate
        return inputs, dilated_steps

    def _init_hidden(self, batch_size, inputs):
        return torch.zeros(1, batch_size, self.n_hidden, device=inputs.device)

    def _apply_layer(self, cell, inputs, rate, hidden):
        n_steps = len(inputs)
        batch_size = inputs[0].size(0)
        inputs, dilated_steps = self._pad_inputs(inputs, n_steps, rate)
        dilated_inputs = torch.cat([inputs[j::rate, :, :] for j in range(rate)], 1)
        if hidden is None or hidden.size(1) != batch_size * rate:
            hidden = self._init_hidden(batch_size * rate, dilated_inputs)
        dilated_outputs, hidden = cell(dilated_inputs, hidden)
        blocks = [dilated_outputs[:, i * batch_size: (i + 1) * batch_size, :] for i in range(rate)]
        interleaved = torch.stack(blocks).transpose(1, 0).contiguous()
        interleaved = interleaved.view(dilated_outputs.size(0) * rate, batch_size, dilated_outputs.size(2))
        return interleaved[:n_steps], hidden

    def forward(self, inputs):
        if self.batch_first:
            inputs = inputs.transpose(0, 1)
        for i, (cell, dilation) in enumerate(zip(self.cells, self.dilations)):
            inputs, self.hidden_memory[i] = self._apply_layer(cell, inputs, dilation, self.hidden_memory[i])  # expect: TML005
        if self.batch_first:
            inputs = inputs.transpose(0, 1)
        return inputs


class Forecaster(nn.Module):
    def __init__(self, n_input, n_hidden, n_layers, horizon):
        super(Forecaster, self).__init__()
        self.drnn = DRNN(n_input, n_hidden, n_layers)
        self.head = nn.Linear(n_hidden, horizon)

    def forward(self, x):
        out = self.drnn(x)
        return self.head(out[:, -1, :])


def windows(series, window, horizon, batch_size):
    xs, ys = [], []
    for start in range(0, len(series) - window - horizon, window):
        xs.append(series[start:start + window])
        ys.append(series[start + window:start + window + horizon, 0])
        if len(xs) == batch_size:
            yield torch.stack(xs), torch.stack(ys)
            xs, ys = [], []


def train_forecaster(series, n_epochs=20, window=64, horizon=12, batch_size=32, lr=1e-3):
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = Forecaster(series.size(1), 64, 5, horizon).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = nn.MSELoss()
    for epoch in range(n_epochs):
        epoch_loss = 0.0
        n_batches = 0
        for x, y in windows(series, window, horizon, batch_size):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward(retain_graph=True)  # expect: TML006
            optimizer.step()
            epoch_loss += loss.item()
            n_batches += 1
        print('epoch {:3d} | train mse {:.5f}'.format(epoch, epoch_loss / max(n_batches, 1)))
    return model

# Source: https://github.com/ugurgudelek/berries/blob/740df373b429d941548bc3305870f77eba1ea51e/berries/model/lstm.py
# Report: audited repository code: a stateful time-series LSTM forecaster keeps (h, c) on self.hidden between batches (reset only every hidden_reset_period steps) and detaches it in place at the end of forward ("otherwise retain_graph=True is necessary if stateful=True")
# Shape: the same stateful forecaster with the safeguard removed: the in-place detach_ of (h, c) at the end of forward is gone, so self.hidden keeps each batch's graph and the next batch's LSTM call chains onto it (the comment in the original warns about exactly this)
# Expect: TML005 line 58
import torch
from torch import nn


class LSTM(nn.Module):
    """Stateful LSTM for time series: the state is carried from batch to batch."""

    def __init__(self, sequence_input_size, hidden_size, output_size=1, num_layers=2,
                 batch_size=64, stateful=False, hidden_reset_period=None):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.batch_size = batch_size
        self.stateful = stateful
        self.step = 0
        if self.stateful and hidden_reset_period is None:
            raise Exception("When stateful is True, you should pass hidden_reset_period")
        self.hidden_reset_period = hidden_reset_period

        self.lstm = nn.LSTM(input_size=sequence_input_size, hidden_size=hidden_size,
                            num_layers=num_layers, batch_first=True)
        self.classifier = nn.Sequential(
            nn.Linear(hidden_size, hidden_size // 2),
            nn.ReLU(),
            nn.Linear(hidden_size // 2, output_size),
        )
        self.hidden = self._init_hidden()

    @property
    def device(self):
        return next(self.parameters()).device

    def _init_hidden(self, batch_size=None):
        batch_size = batch_size or self.batch_size
        shape = (self.num_layers, batch_size, self.hidden_size)
        h0 = nn.init.xavier_uniform_(torch.empty(shape)).to(self.device)
        c0 = nn.init.xavier_uniform_(torch.empty(shape)).to(self.device)
        return h0, c0

    def reset_states(self, batch_size=None):
        self.hidden = self._init_hidden(batch_size=batch_size)

    def forward(self, x):
        sequence = x['sequences']
        batch_size = sequence.shape[0]

        if not self.stateful:
            self.reset_states(batch_size=batch_size)
        else:
            if self.hidden_reset_period != -1 and self.step % self.hidden_reset_period == 0:
                self.reset_states(batch_size=batch_size)
            self.step += 1

        lstm_out, self.hidden = self.lstm(sequence, self.hidden)  # expect: TML005
        fc_out = self.classifier(lstm_out[:, -1, :])

        return fc_out


def fit(model, train_loader, optimizer, criterion, epochs):
    model.train()
    for epoch in range(epochs):
        running = 0.0
        for batch in train_loader:
            batch = {k: v.to(model.device) for k, v in batch.items()}
            optimizer.zero_grad()
            pred = model({'sequences': batch['sequences']})
            loss = criterion(pred, batch['targets'])
            loss.backward()
            optimizer.step()
            running += loss.item()
        print(f"epoch {epoch}: {running / len(train_loader):.5f}")

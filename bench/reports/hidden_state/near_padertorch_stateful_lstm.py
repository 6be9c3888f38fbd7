# Source: https://github.com/fgnt/padertorch/blob/ca62dbc4a62250ebb9bcb091c27be118df679c48/padertorch/modules/recurrent.py
# Report: audit: StatefulLSTM.forward rebinds self.states to the LSTM's returned (h, c) and feeds them into the next call; with the default save_states=True the kept states carry the previous chunk's graph into every later step
# Shape: same stateful layer and streaming loop, but forward keeps only detached copies of (h, c) on self (truncated BPTT at chunk boundaries), so no graph outlives the step
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class StatefulLSTM(nn.Module):
    """LSTM layer that continues from where the previous call stopped."""

    def __init__(self, input_size, hidden_size, num_layers=1,
                 bidirectional=False, batch_first=True, save_states=True):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers,
                            bidirectional=bidirectional, batch_first=batch_first)
        self.save_states = save_states
        self.states = None

    def reset_states(self):
        self.states = None

    def forward(self, x):
        h, states = self.lstm(x, self.states)
        if self.save_states:
            self.states = tuple(s.detach() for s in states)
        else:
            self.states = None
        return h


class StreamingMaskEstimator(nn.Module):
    def __init__(self, num_features, num_units=512, dropout=0.3):
        super().__init__()
        self.num_features = num_features
        self.recurrent = StatefulLSTM(num_features, num_units)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(num_units, 2 * num_features)

    def forward(self, batch):
        h = self.dropout(self.recurrent(batch["observation_abs"]))
        masks = torch.sigmoid(self.out(h))
        return dict(speech_mask_prediction=masks[..., :self.num_features],
                    noise_mask_prediction=masks[..., self.num_features:])

    def review(self, batch, output):
        speech = F.binary_cross_entropy(output["speech_mask_prediction"], batch["speech_mask_target"])
        noise = F.binary_cross_entropy(output["noise_mask_prediction"], batch["noise_mask_target"])
        return dict(loss=speech + noise)


def train(model, stream_loader, epochs=10, lr=1e-3, device="cuda"):
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history = []
    for epoch in range(epochs):
        model.train()
        model.recurrent.reset_states()
        for chunk in stream_loader:
            chunk = {k: v.to(device) for k, v in chunk.items()}
            output = model(chunk)
            review = model.review(chunk, output)
            optimizer.zero_grad()
            review["loss"].backward()
            optimizer.step()
            history.append(review["loss"].item())
        print(f"epoch {epoch}: {sum(history[-len(stream_loader):]) / len(stream_loader):.4f}")
    return history

# Source: https://github.com/MorvanZhou/PyTorch-Tutorial/issues/57
# Report: in the sin->cos RNN regressor, removing `h_state = h_state.data` raised "backward through the graph a second time"; passing retain_graph=True silenced the error but keeps every step's graph alive through the carried hidden state
# Shape: h_state returned by the model is fed into the next step un-repacked, and each step's backward retains the graph, so the chain of graphs grows with the step count
# Expect: TML006 line 57; TML005 line 53
import numpy as np
import torch
from torch import nn

TIME_STEP = 10
INPUT_SIZE = 1
LR = 0.02


class RNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(
            input_size=INPUT_SIZE,
            hidden_size=32,
            num_layers=1,
            batch_first=True,
        )
        self.out = nn.Linear(32, 1)

    def forward(self, x, h_state):
        r_out, h_state = self.rnn(x, h_state)
        outs = []
        for time_step in range(r_out.size(1)):
            outs.append(self.out(r_out[:, time_step, :]))
        return torch.stack(outs, dim=1), h_state


def make_window(step):
    start, end = step * np.pi, (step + 1) * np.pi
    steps = np.linspace(start, end, TIME_STEP, dtype=np.float32, endpoint=False)
    x = torch.from_numpy(np.sin(steps)[np.newaxis, :, np.newaxis])
    y = torch.from_numpy(np.cos(steps)[np.newaxis, :, np.newaxis])
    return steps, x, y


def train(n_steps=100):
    rnn = RNN()
    optimizer = torch.optim.Adam(rnn.parameters(), lr=LR)
    loss_func = nn.MSELoss()
    h_state = None
    history = []

    for step in range(n_steps):
        steps, x, y = make_window(step)

        # continue from where the previous window stopped; the repack line
        # `h_state = h_state.data` was dropped and replaced by retain_graph below
        prediction, h_state = rnn(x, h_state)  # expect: TML005

        loss = loss_func(prediction, y)
        optimizer.zero_grad()
        loss.backward(retain_graph=True)  # expect: TML006
        optimizer.step()

        history.append((steps, prediction.detach().numpy().flatten()))
    return rnn, history


if __name__ == "__main__":
    train()

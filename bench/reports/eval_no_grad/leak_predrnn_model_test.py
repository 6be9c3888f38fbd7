# Source: https://github.com/thuml/predrnn-pytorch/blob/master/core/models/model_factory.py
# Report: PredRNN video prediction: Model.test() unrolls the whole spatiotemporal LSTM over total_length frames with autograd on (no no_grad in Model.test or in trainer.test), once per test batch
# Shape: the wrapper method test() is the evaluation forward; it returns next_frames.detach().cpu().numpy(), so nothing grows, but each test batch builds and holds the full unrolled graph (every time step's gates and memories) for a backward that never comes
# Expect: TML003 line 48
import datetime
import os

import numpy as np
import torch
from torch import nn
from torch.optim import Adam


class PredNet(nn.Module):
    """Stand-in for the stacked ST-LSTM network: returns (next_frames, loss)."""

    def __init__(self, channels, hidden):
        super().__init__()
        self.enc = nn.Conv2d(channels, hidden, 5, padding=2)
        self.dec = nn.Conv2d(hidden, channels, 1)

    def forward(self, frames, mask):
        b, t, h, w, c = frames.shape
        x = frames.permute(0, 1, 4, 2, 3).reshape(b * t, c, h, w)
        out = self.dec(torch.tanh(self.enc(x))).reshape(b, t, c, h, w).permute(0, 1, 3, 4, 2)
        loss = nn.functional.mse_loss(out[:, :-1], frames[:, 1:])
        return out, loss


class Model(object):
    def __init__(self, configs):
        self.configs = configs
        self.network = PredNet(configs.patch_size ** 2 * configs.img_channel, 64).to(configs.device)
        self.optimizer = Adam(self.network.parameters(), lr=configs.lr)

    def train(self, frames, mask):
        frames_tensor = torch.FloatTensor(frames).to(self.configs.device)
        mask_tensor = torch.FloatTensor(mask).to(self.configs.device)
        self.optimizer.zero_grad()
        next_frames, loss = self.network(frames_tensor, mask_tensor)
        loss.backward()
        self.optimizer.step()
        return loss.detach().cpu().numpy()

    def test(self, frames, mask):
        frames_tensor = torch.FloatTensor(frames).to(self.configs.device)
        mask_tensor = torch.FloatTensor(mask).to(self.configs.device)
        next_frames, _ = self.network(frames_tensor, mask_tensor)  # expect: TML003
        return next_frames.detach().cpu().numpy()


def train_step(model, ims, real_input_flag, configs, itr):
    cost = model.train(ims, real_input_flag)
    if configs.reverse_input:
        ims_rev = np.flip(ims, axis=1).copy()
        cost += model.train(ims_rev, real_input_flag)
        cost = cost / 2
    if itr % configs.display_interval == 0:
        print(datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"), "itr:", itr, "training loss:", cost)


def test(model, test_input_handle, configs, itr):
    test_input_handle.begin(do_shuffle=False)
    output_length = configs.total_length - configs.input_length
    img_mse = [0.0] * output_length
    avg_mse, batch_id = 0.0, 0
    real_input_flag = np.zeros((configs.batch_size, configs.total_length - configs.input_length - 1,
                                configs.img_width, configs.img_width, configs.img_channel))
    while not test_input_handle.no_batch_left():
        batch_id += 1
        test_ims = test_input_handle.get_batch()
        img_gen = model.test(test_ims, real_input_flag)
        img_out = img_gen[:, -output_length:]
        for i in range(output_length):
            x = test_ims[:, i + configs.input_length]
            gx = np.clip(img_out[:, i], 0, 1)
            mse = np.square(x - gx).sum()
            img_mse[i] += mse
            avg_mse += mse
        test_input_handle.next()
    avg_mse = avg_mse / (batch_id * configs.batch_size)
    print("itr %d mse per seq: %f" % (itr, avg_mse))
    return avg_mse


def train_wrapper(model, train_input_handle, test_input_handle, configs):
    for itr in range(1, configs.max_iterations + 1):
        if train_input_handle.no_batch_left():
            train_input_handle.begin(do_shuffle=True)
        ims = train_input_handle.get_batch()
        real_input_flag = np.zeros_like(ims[:, : configs.total_length - configs.input_length - 1])
        train_step(model, ims, real_input_flag, configs, itr)
        if itr % configs.test_interval == 0:
            test(model, test_input_handle, configs, itr)
        train_input_handle.next()

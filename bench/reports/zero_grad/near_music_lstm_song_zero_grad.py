# Source: https://github.com/JMichaelYang/cs4100final/blob/2ecfa0d4a56d7d461c3158092528016b219afac7/lstm/music_training.py
# Report: NES-music LSTM trainer: trainSong steps the optimizer after every timestep's backward; fixed variant clears gradients before each timestep instead of once per song
# Shape: model.zero_grad() is the first statement of the per-timestep loop, so every optimizer.step() applies only that timestep's gradient
# Expect: near-miss: must be silent
import os
import random

import torch.nn as nn
import torch.optim as optim

HIDDEN_DIMENSION = 15
BASE_FILE_PATH = "../test/resources/training"


class MusicLSTM(nn.Module):
    def __init__(self, hidden_dim):
        super().__init__()
        self.input_dim = 15
        self.hidden_dim = hidden_dim
        self.lstm = nn.LSTM(input_size=self.input_dim, hidden_size=hidden_dim,
                            num_layers=1, batch_first=True)
        self.double()

    def forward(self, timestep):
        lstm_out, _ = self.lstm(timestep)
        return lstm_out


def get_random_file():
    files = os.listdir(BASE_FILE_PATH)
    return files[random.randrange(len(files))]


def convert_file(path, codec):
    exprsco = codec.load_file(os.path.join(BASE_FILE_PATH, path))
    return codec.expressive_to_internal(exprsco)


def train_song(model, path, codec, loss_function, optimizer):
    internal = convert_file(path, codec)

    for i, data in enumerate(internal[:-1]):
        # clear the gradients
        model.zero_grad()
        predicted = model(data)
        next_data = internal[i + 1]
        loss = loss_function(predicted, next_data)
        loss.backward()
        optimizer.step()


def train_model(num_songs, codec):
    model = MusicLSTM(HIDDEN_DIMENSION)
    loss_function = nn.MSELoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    for _ in range(num_songs):
        train_song(model, get_random_file(), codec, loss_function, optimizer)
    return model

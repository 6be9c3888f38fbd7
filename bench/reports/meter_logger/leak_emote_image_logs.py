# Source: https://github.com/EmbarkStudios/emote/pull/122
# Report: suspected memory leak from callbacks keeping logged tensors that still carried gradients; scalars were already reduced with .item(), but logged images were stored without detach
# Shape: a LoggingMixin keeps image_logs on the callback object; the per-step decoder-loss callback logs its reconstruction through self.log_image, which stores the graph-attached tensor
# Expect: TML001 line 31
from collections import deque

import torch
import torch.nn.functional as F


class LoggingMixin:
    def __init__(self, *, default_window_length=250, **kwargs):
        super().__init__(**kwargs)
        self.scalar_logs = {}
        self.windowed_scalar = {}
        self.image_logs = {}
        self.hist_logs = {}
        self._default_window_length = default_window_length

    def log_scalar(self, key, value):
        self.scalar_logs[key] = value.item() if isinstance(value, torch.Tensor) else value

    def log_windowed_scalar(self, key, value):
        if key not in self.windowed_scalar:
            self.windowed_scalar[key] = deque(maxlen=self._default_window_length)
        val = value.item() if isinstance(value, torch.Tensor) else value
        self.windowed_scalar[key].append(val)

    def log_image(self, key, value):
        if len(value.shape) == 3:
            self.image_logs[key] = value  # expect: TML001

    def log_histogram(self, key, value):
        self.hist_logs[key] = value.detach()


class DecoderLoss(LoggingMixin):
    def __init__(self, encoder, decoder, optimizer, log_every=500):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.optimizer = optimizer
        self.log_every = log_every
        self.steps = 0

    def backward(self, observation):
        self.optimizer.zero_grad()
        latent = self.encoder(observation)
        reconstruction = self.decoder(latent)
        loss = F.mse_loss(reconstruction, observation)
        loss.backward()
        self.optimizer.step()
        self.steps += 1
        self.log_scalar("loss/decoder", loss)
        self.log_windowed_scalar("loss/decoder_windowed", loss)
        self.log_histogram("latent/values", latent)
        if self.steps % self.log_every == 0:
            self.log_image("images/reconstruction", reconstruction[0])


def train(callbacks, dataloader, max_steps):
    for step, batch in enumerate(dataloader):
        for cb in callbacks:
            cb.backward(batch["observation"])
        if step >= max_steps:
            break

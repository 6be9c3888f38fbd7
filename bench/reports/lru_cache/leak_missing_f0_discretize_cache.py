# Source: https://github.com/Daniel-Chin/Missing-F0-Piano/blob/1a3b00fabb1f6ca0ad65e2adb6ad703f47c2532f/solve.py
# Report: psychoacoustic "missing fundamental" piano solver memoises discretize() with @lru_cache; the cached value is a tuple holding the contribution matrix and response envelope tensors (the author notes "don't mutate out tensor")
# Shape: lru_cache keeps every returned tensor alive for the life of the process (and hands the same tensor objects to every Trainee); the device() cache next to it returns a torch.device, not a tensor
# Expect: TML012 line 34
from functools import lru_cache
from itertools import count

import torch

GUI_PITCHES = [40, 48, 60]
PIANO_RANGE = range(21, 109)
HUMAN_RANGE = (20.0, 20000.0)
FREE_BUT_SMALL = 0.05


@lru_cache(1)
def device():
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def pitch2freq(pitch):
    return 440.0 * 2 ** ((pitch - 69) / 12)


def freq2pitch_batch(freq):
    return 69 + 12 * torch.log2(freq / 440.0)


def get_overtones(pitch):
    f0 = pitch2freq(pitch)
    return freq2pitch_batch(torch.arange(f0, HUMAN_RANGE[1], f0))


@lru_cache(len(GUI_PITCHES))  # expect: TML012
def discretize(target_pitch, perception_tolerance, respect_response):
    target_overtones = get_overtones(target_pitch)[1:]
    pitches_above = range(target_pitch + 1, PIANO_RANGE.stop)
    contributions = torch.zeros((len(pitches_above), len(target_overtones) + 1))
    for i_above, pitch in enumerate(pitches_above):
        for overtone in get_overtones(pitch):
            deviate = (target_overtones - overtone).abs()
            i = deviate.argmin().item()
            if deviate[i] < perception_tolerance:
                contributions[i_above, i] += 1.0
            else:
                contributions[i_above, -1] += respect_response
    response_envelope = torch.exp(-respect_response * (target_overtones - target_pitch) / 12)
    return contributions, response_envelope, pitches_above


class Trainee:
    def __init__(self, target_pitch, perception_tolerance, penalize_strangers, lr, respect_response=1.0):
        self.penalize_strangers = penalize_strangers
        contributions, response_envelope, pitches_above = discretize(
            target_pitch, perception_tolerance, respect_response,
        )
        self.contributions = contributions.to(device())
        self.response_envelope = response_envelope.to(device())
        self.activations = torch.full((len(pitches_above),), FREE_BUT_SMALL, device=device())
        self.activations.requires_grad = True
        self.optim = torch.optim.Adam([self.activations], lr=lr)

    def forward(self):
        produced = self.contributions.T @ self.activations.square()
        loss_needed = ((produced[:-1] + 1e-4).log().square() * self.response_envelope).sum()
        loss_strangers = (produced[-1] + 1e-6).log() + produced[-1] * self.penalize_strangers
        return loss_needed + loss_strangers, produced.detach()

    def train(self, patience=20):
        losses, best, boredom = [], float("inf"), 0
        for epoch in count():
            loss, produced = self.forward()
            loss_item = loss.detach().item()
            losses.append(loss_item)
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
            if loss_item < best:
                best, boredom = loss_item, 0
            else:
                boredom += 1
                if boredom > patience:
                    break
        return best, produced


def solve(target_pitch, perception_tolerance=0.1, penalize_strangers=1.0, lr=2e-2):
    trainee = Trainee(target_pitch, perception_tolerance, penalize_strangers, lr)
    best, produced = trainee.train()
    with torch.no_grad():
        powers = trainee.activations.square().cpu()
    return powers, best

# Source: https://github.com/pytorch/pytorch/issues/1887
# Report: A GRU encoder on the GPU was called in an endless loop with its returned hidden state fed back in as both input and state; GPU memory kept growing until it ran out of memory.
# Shape: a streaming helper keeps reassigning `hidden` from the GRU's own output on every step, with grad enabled and no detach, so each step's graph is chained onto all earlier steps for as long as the loop runs.
# Expect: TML005 line 21
import itertools

import torch
import torch.nn as nn


def log_memory(step, output):
    used = torch.cuda.memory_allocated() / 2**20
    print(f"step {step}: |out|={output.norm().item():.3f} allocated={used:.1f} MiB")


def run_stream(encoder, hidden, max_steps=None, log_every=1000):
    output = None
    steps = itertools.count(1) if max_steps is None else range(1, max_steps + 1)
    for num in steps:
        # the GRU's own hidden state is fed back as the next input and the next state
        output, hidden = encoder(hidden, hidden)  # expect: TML005
        if num % log_every == 0:
            log_memory(num, output)
    return output, hidden


def main():
    encoder = nn.GRU(100, 100).cuda()
    hidden = torch.randn(1, 1, 100).cuda()
    run_stream(encoder, hidden)


if __name__ == "__main__":
    main()

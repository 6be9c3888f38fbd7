# Modelled on: https://github.com/tatsu-lab/alpaca_farm/pull/58
# Report: a zero-grad bug: gradients were cleared once, not after each optimizer step, so later updates used summed gradients.
import torch


def finetune(policy, batches, lr=1e-5):
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    optimizer.zero_grad()
    for batch in batches:
        logprobs = policy(batch["queries"], batch["responses"])
        loss = -(logprobs * batch["advantages"]).mean()
        loss.backward()
        optimizer.step()  # expect: TML002

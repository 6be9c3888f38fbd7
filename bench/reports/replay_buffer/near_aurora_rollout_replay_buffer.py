# Source: https://github.com/microsoft/aurora/issues/147
# Report: maintainer explains roll-out fine-tuning: one-step prediction, loss, update, then the prediction is put back in a replay buffer and fed in as a later input; the paper's "pushforward trick" propagates gradients only through the last roll-out step
# Shape: the next input is built from the prediction under torch.no_grad(), and offloaded with .to("cpu"), so the buffered state carries no history: gradients flow only through the current step (pushforward trick)
# Expect: near-miss: must be silent
import dataclasses
import random

import torch

from aurora import AuroraPretrained, Batch


def mae_loss(pred: Batch, target: Batch) -> torch.Tensor:
    surf = [(pred.surf_vars[k] - target.surf_vars[k]).abs().mean() for k in pred.surf_vars]
    atmos = [(pred.atmos_vars[k] - target.atmos_vars[k]).abs().mean() for k in pred.atmos_vars]
    return sum(surf) + sum(atmos)


def next_input(batch: Batch, pred: Batch) -> Batch:
    # Drop the oldest history step and append the prediction (aurora/rollout.py).
    return dataclasses.replace(
        pred,
        surf_vars={
            k: torch.cat([batch.surf_vars[k][:, 1:], v], dim=1) for k, v in pred.surf_vars.items()
        },
        atmos_vars={
            k: torch.cat([batch.atmos_vars[k][:, 1:], v], dim=1) for k, v in pred.atmos_vars.items()
        },
    )


def rollout_finetune(model, dataset, num_steps, buffer_size=64, refresh_every=8, max_lead=40):
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5)
    model.train()
    replay = []  # (input batch, lead step), kept on the host
    data_iter = iter(dataset)

    for step in range(num_steps):
        if step % refresh_every == 0 or not replay:
            fresh = next(data_iter)
            replay.append((fresh, 0))
            if len(replay) > buffer_size:
                replay.pop(0)

        batch, lead = replay.pop(random.randrange(len(replay)))
        batch = batch.to("cuda")
        target = dataset.target_for(batch, lead + 1).to("cuda")

        opt.zero_grad()
        pred = model(batch)
        loss = mae_loss(pred, target)
        loss.backward()
        opt.step()

        if lead + 1 < max_lead:
            with torch.no_grad():
                nxt = next_input(batch, pred)
            replay.append((nxt.to("cpu"), lead + 1))

        if step % 100 == 0:
            print(f"step {step} lead {lead} loss {loss.item():.4f}")


if __name__ == "__main__":
    model = AuroraPretrained(autocast=True)
    model.load_checkpoint()
    model.configure_activation_checkpointing()
    model = model.to("cuda")
    from data import ERA5RolloutDataset

    rollout_finetune(model, ERA5RolloutDataset("/data/era5"), num_steps=10_000)

# Modelled on: https://github.com/meta-pytorch/torchforge/pull/71
# Report: "fixing a dumb bug where we weren't zeroing grad on optimizers after each step".
import torch
from accelerate import Accelerator


def main(model, train_dl, lr=2e-5, epochs=2):
    accelerator = Accelerator()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer)
    model, optimizer, train_dl = accelerator.prepare(model, optimizer, train_dl)
    model.train()
    for _ in range(epochs):
        for batch in train_dl:
            with accelerator.accumulate(model):
                accelerator.backward(model(**batch).loss)
                optimizer.step()  # expect: TML002
            scheduler.step()

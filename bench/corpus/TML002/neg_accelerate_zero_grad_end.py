# Modelled on: https://github.com/meta-pytorch/torchforge/pull/71
# Report: the fixed accelerate loop zeroes gradients after every step.
import torch
from accelerate import Accelerator


def main(model, train_dl, lr=2e-5, epochs=2):
    accelerator = Accelerator()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.LinearLR(optimizer)
    model, optimizer, train_dl = accelerator.prepare(model, optimizer, train_dl)
    for epoch in range(epochs):
        model.train()
        for step, batch in enumerate(train_dl):
            outputs = model(**batch)
            accelerator.backward(outputs.loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()

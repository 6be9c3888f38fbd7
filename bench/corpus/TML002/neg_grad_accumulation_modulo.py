# Modelled on: https://github.com/karpathy/llm.c/pull/548
# Report: gradients are deliberately accumulated over micro-steps; zero_grad runs right after each optimizer step.
import torch


def train(model, loader, optimizer, accum_steps=8):
    model.train()
    for step, (x, y) in enumerate(loader):
        logits, loss = model(x, y)
        (loss / accum_steps).backward()
        if (step + 1) % accum_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

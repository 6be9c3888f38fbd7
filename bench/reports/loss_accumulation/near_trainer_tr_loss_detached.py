# Source: https://github.com/huggingface/transformers/pull/7276
# Report: the review kept tr_loss as a tensor (for TPUs) but the loss added to it must not carry history; the Trainer adds a detached loss.
# Shape: same helper returning the output object; the running tensor total adds outputs.loss.detach().
# Expect: near-miss: must be silent
import torch


def training_step(model, inputs, optimizer):
    outputs = model(**inputs)
    outputs.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return outputs


def train(model, dataloader, optimizer, epochs=3, logging_steps=500):
    tr_loss = torch.tensor(0.0)
    global_step = 0
    for epoch in range(epochs):
        for inputs in dataloader:
            outputs = training_step(model, inputs, optimizer)
            tr_loss += outputs.loss.detach()
            global_step += 1
            if global_step % logging_steps == 0:
                print(f"step {global_step}: loss {tr_loss.item() / global_step:.4f}")
    return tr_loss.item() / max(global_step, 1)

# Source: https://github.com/huggingface/transformers/pull/7276
# Report: the Trainer recorded the aggregated training loss as a torch.Tensor (tr_loss) that accumulated history across the training loop, using around 120 GB of CPU memory over 240,000 steps.
# Shape: the step helper returns the model output object; the loop adds its .loss attribute to the running total.
# Expect: TML001 line 22
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
            tr_loss += outputs.loss  # expect: TML001
            global_step += 1
            if global_step % logging_steps == 0:
                print(f"step {global_step}: loss {tr_loss.item() / global_step:.4f}")
    return tr_loss.item() / max(global_step, 1)

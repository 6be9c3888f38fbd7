# Source: https://github.com/macrocosm-os/pretraining/pull/104
# Report: the subnet validator scored each miner model's loss over all evaluation batches with autograd on; the PR wraps the loop in torch.no_grad() to save memory
# Shape: fixed as merged: the per-batch loss loop runs inside torch.no_grad()
# Expect: near-miss: must be silent
import math
import traceback

import torch


def check_for_reasonable_output(model, inputs_1, inputs_2, pad_token_id) -> bool:
    return inputs_1.shape == inputs_2.shape and pad_token_id is not None


def compute_losses(model, batches, device: str, pad_token_id: int):
    model.to(device)
    model.eval()

    prompt_length = 100
    inputs_1 = batches[0][:, :prompt_length].to(device)
    inputs_2 = batches[1][:, :prompt_length].to(device)
    if not check_for_reasonable_output(model, inputs_1, inputs_2, pad_token_id):
        return [math.inf for _ in range(len(batches))]

    losses = []
    with torch.no_grad():
        for batch in batches:
            try:
                inputs = batch.to(device)
                logits = model(inputs).logits

                shift_logits = logits[..., :-1, :].contiguous()
                shift_labels = inputs[..., 1:].contiguous()
                loss_fct = torch.nn.CrossEntropyLoss()
                shift_logits = shift_logits.view(-1, model.config.vocab_size)
                shift_labels = shift_labels.view(-1)
                loss = loss_fct(shift_logits, shift_labels).item()

                losses.append(loss)
            except Exception as e:
                print(f"Exception occurred: {e}")
                traceback.print_exc()
                losses.append(math.inf)

    return losses

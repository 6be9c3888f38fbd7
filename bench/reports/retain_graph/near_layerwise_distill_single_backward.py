# Source: https://github.com/pytorch/pytorch/issues/40005
# Report: the recommended way: do not call backward per layer with retain_graph; combine the per-layer terms and backpropagate once.
# Shape: same per-layer KL terms collected in a list that is reset per batch and summed for one backward; the log keeps floats.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def distill_epoch(student, teacher, loader, optimizer, layer_map):
    layer_losses = []
    for inputs in loader:
        with torch.no_grad():
            teacher_states = teacher(**inputs).hidden_states
        student_states = student(**inputs).hidden_states
        terms = []
        for i, k in enumerate(layer_map):
            terms.append(F.kl_div(
                F.log_softmax(student_states[i + 1], dim=-1),
                F.softmax(teacher_states[k + 1], dim=-1),
                reduction="batchmean",
            ))
        total = torch.stack(terms).sum()
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        layer_losses.append(total.item())
    return layer_losses

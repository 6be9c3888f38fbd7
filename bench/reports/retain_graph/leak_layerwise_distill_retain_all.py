# Source: https://github.com/pytorch/pytorch/issues/40005
# Report: training intermediate layers of a student BERT independently with one KL loss per layer and output.backward(retain_graph=True) ran out of memory; the answer recommends autograd.grad instead.
# Shape: every per-layer backward retains, the last one of the step included, and the per-layer losses are kept for the epoch log.
# Expect: TML006 line 22; TML001 line 23
import torch
import torch.nn.functional as F


def distill_epoch(student, teacher, loader, optimizer, layer_map):
    layer_losses = []
    for inputs in loader:
        with torch.no_grad():
            teacher_states = teacher(**inputs).hidden_states
        student_states = student(**inputs).hidden_states
        optimizer.zero_grad()
        for i, k in enumerate(layer_map):
            kl = F.kl_div(
                F.log_softmax(student_states[i + 1], dim=-1),
                F.softmax(teacher_states[k + 1], dim=-1),
                reduction="batchmean",
            )
            kl.backward(retain_graph=True)  # expect: TML006
            layer_losses.append(kl)  # expect: TML001
        optimizer.step()
    return layer_losses

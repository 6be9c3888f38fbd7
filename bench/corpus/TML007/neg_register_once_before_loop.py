# Modelled on: https://github.com/fffasttime/MRFI/pull/5
# Report: near-miss: the hook is registered once, its handle kept, and removed after training.
import torch
import torch.nn.functional as F


def distill(student, teacher, loader, optimizer):
    feats = {}
    handle = teacher.layer4.register_forward_hook(lambda m, i, o: feats.__setitem__("t", o))
    for images, labels in loader:
        with torch.no_grad():
            teacher(images)
        logits, s_feat = student(images)
        loss = F.cross_entropy(logits, labels) + F.mse_loss(s_feat, feats["t"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    handle.remove()

# Modelled on: https://github.com/fffasttime/MRFI/pull/5
# Report: the RemovableHandle objects returned by register_forward_hook were discarded, so hooks (and their closures) accumulated over a long campaign.
import torch
import torch.nn.functional as F


def distill(student, teacher, loader, optimizer):
    feats = {}
    for images, labels in loader:
        teacher.layer4.register_forward_hook(lambda m, i, o: feats.__setitem__("t", o))  # expect: TML007
        with torch.no_grad():
            teacher(images)
        logits, s_feat = student(images)
        loss = F.cross_entropy(logits, labels) + F.mse_loss(s_feat, feats["t"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

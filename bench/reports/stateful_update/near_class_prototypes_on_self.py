# Source: https://github.com/imatif17/Prototype-Mean-Teacher/issues/14
# Report: per-class prototypes kept on the detector (self.prototype_*) are averaged from ROI features and detach_()-ed after the prototype loss; the thread asks why they are detached (the repo also rebuilds them per call, questioned in issue #15; here they persist as running means)
# Shape: as in the repository, the prototypes are detached in place right after the prototype loss is built, so the graph only spans the current step (the loss still backpropagates through this step's features)
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class PrototypeNet(nn.Module):
    def __init__(self, in_dim=1024, hidden=512, out_dim=128):
        super().__init__()
        self.linear1 = nn.Linear(in_dim, hidden)
        self.linear2 = nn.Linear(hidden, out_dim)

    def forward(self, x):
        return self.linear2(F.relu(self.linear1(x)))


class ProtoDetector(nn.Module):
    def __init__(self, backbone, roi_head, num_classes, dim=128):
        super().__init__()
        self.backbone = backbone
        self.roi_head = roi_head
        self.proto = PrototypeNet(out_dim=dim)
        self.num_classes = num_classes
        self.register_buffer("prototype_s", torch.zeros(num_classes, dim))
        self.register_buffer("prototype_t", torch.zeros(num_classes, dim))
        self.count_s = [0] * num_classes
        self.count_t = [0] * num_classes

    def forward(self, images_s, boxes_s, labels_s, images_t, boxes_t, labels_t):
        feats_s = self.proto(self.roi_head(self.backbone(images_s), boxes_s))
        feats_t = self.proto(self.roi_head(self.backbone(images_t), boxes_t))
        for lab, f in zip(labels_s.tolist(), feats_s):
            self.prototype_s[lab] = (self.prototype_s[lab] * self.count_s[lab] + f) / (self.count_s[lab] + 1)
            self.count_s[lab] += 1
        for lab, f in zip(labels_t.tolist(), feats_t):
            self.prototype_t[lab] = (self.prototype_t[lab] * self.count_t[lab] + f) / (self.count_t[lab] + 1)
            self.count_t[lab] += 1
        loss = -F.cosine_similarity(self.prototype_s, self.prototype_t).abs().mean()
        self.prototype_s.detach_()
        self.prototype_t.detach_()
        return loss


def train(model, loader, optimizer, max_iter):
    model.train()
    for it, batch in enumerate(loader):
        if it >= max_iter:
            break
        batch = [t.cuda() for t in batch]
        loss = model(*batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if it % 20 == 0:
            print(it, loss.item())

# Source: https://github.com/EasonApolo/mstn/issues/4
# Report: MSTN semantic-alignment loss keeps per-class moving centroids across batches; the author explains the stored centroid must be detached or the graph keeps growing
# Shape: same module as the leak, but the centroids kept on self are detached, so only this batch's graph is used by the loss
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class SemanticAlignLoss(nn.Module):
    """Moving-centroid semantic loss between source and pseudo-labelled target."""

    def __init__(self, num_classes, feat_dim, decay=0.3, device="cuda"):
        super().__init__()
        self.num_classes = num_classes
        self.decay = decay
        self.s_centroid = torch.zeros(num_classes, feat_dim, device=device)
        self.t_centroid = torch.zeros(num_classes, feat_dim, device=device)
        self.mse = nn.MSELoss()

    def _class_means(self, feats, labels):
        ones = torch.ones_like(labels, dtype=torch.float)
        counts = torch.zeros(self.num_classes, device=feats.device)
        counts = counts.scatter_add(0, labels, ones).clamp(min=1.0)
        sums = torch.zeros(self.num_classes, feats.size(1), device=feats.device)
        sums = sums.scatter_add(0, labels.unsqueeze(1).expand_as(feats), feats)
        return sums / counts.unsqueeze(1)

    def forward(self, s_feat, s_label, t_feat, t_logits):
        t_label = t_logits.argmax(dim=1)
        current_s = self._class_means(s_feat, s_label)
        current_t = self._class_means(t_feat, t_label)

        decay = self.decay
        s_centroid = (1 - decay) * self.s_centroid + decay * current_s
        t_centroid = (1 - decay) * self.t_centroid + decay * current_t
        semantic_loss = self.mse(s_centroid, t_centroid)

        # remember the running centroids for the next batch
        self.s_centroid = s_centroid.detach()
        self.t_centroid = t_centroid.detach()
        return semantic_loss


def train_epoch(feature_net, classifier, sem_loss, opt, src_loader, tgt_loader, lam=0.1):
    for (xs, ys), (xt, _) in zip(src_loader, tgt_loader):
        xs, ys, xt = xs.cuda(), ys.cuda(), xt.cuda()
        fs, ft = feature_net(xs), feature_net(xt)
        cls_loss = nn.functional.cross_entropy(classifier(fs), ys)
        loss = cls_loss + lam * sem_loss(fs, ys, ft, classifier(ft))
        opt.zero_grad()
        loss.backward()
        opt.step()

# Source: https://github.com/vturrisi/solo-learn/issues/186
# Report: GPU memory kept rising during self-supervised pretraining; the cause was the online k-NN evaluation metric, which banked every training and validation feature batch on the GPU until the epoch-end compute (k-NN eval was then turned off by default)
# Shape: close variant that keeps the banks in host memory: update() moves every detached feature and target batch to the CPU before appending, so GPU memory stays flat through the epoch
# Expect: near-miss: must be silent
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torchmetrics.metric import Metric


class WeightedKNNClassifier(Metric):
    def __init__(self, k=20, T=0.07, max_distance_matrix_size=int(5e6)):
        super().__init__(compute_on_step=False)
        self.k = k
        self.T = T
        self.max_distance_matrix_size = max_distance_matrix_size
        self.add_state("train_features", default=[], persistent=False)
        self.add_state("train_targets", default=[], persistent=False)
        self.add_state("test_features", default=[], persistent=False)
        self.add_state("test_targets", default=[], persistent=False)

    def update(self, train_features=None, train_targets=None, test_features=None, test_targets=None):
        if train_features is not None:
            self.train_features.append(train_features.detach().cpu())
            self.train_targets.append(train_targets.detach().cpu())
        if test_features is not None:
            self.test_features.append(test_features.detach().cpu())
            self.test_targets.append(test_targets.detach().cpu())

    @torch.no_grad()
    def compute(self):
        train_features = F.normalize(torch.cat(self.train_features), dim=1)
        train_targets = torch.cat(self.train_targets)
        test_features = F.normalize(torch.cat(self.test_features), dim=1)
        test_targets = torch.cat(self.test_targets)
        num_classes = int(train_targets.max()) + 1
        k = min(self.k, train_targets.size(0))
        chunk = max(1, self.max_distance_matrix_size // train_targets.size(0))
        top1, total = 0.0, 0
        for idx in range(0, test_targets.size(0), chunk):
            feats, targets = test_features[idx:idx + chunk], test_targets[idx:idx + chunk]
            sim, indices = torch.mm(feats, train_features.t()).topk(k, dim=1)
            neighbors = train_targets[indices]
            weights = (sim / self.T).exp()
            votes = torch.zeros(feats.size(0), num_classes, device=feats.device)
            votes.scatter_add_(1, neighbors, weights)
            top1 += (votes.argmax(1) == targets).sum().item()
            total += targets.size(0)
        self.reset()
        return 100.0 * top1 / max(total, 1)


class BaseMethod(pl.LightningModule):
    def __init__(self, backbone, classifier, knn_k=20):
        super().__init__()
        self.backbone = backbone
        self.classifier = classifier
        self.knn = WeightedKNNClassifier(k=knn_k)

    def training_step(self, batch, batch_idx):
        _, X, targets = batch
        feats = self.backbone(X)
        loss = F.cross_entropy(self.classifier(feats.detach()), targets)
        self.knn(train_features=feats.detach(), train_targets=targets.detach())
        self.log("train_class_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        X, targets = batch
        feats = self.backbone(X)
        self.knn(test_features=feats.detach(), test_targets=targets.detach())

    def on_validation_epoch_end(self):
        self.log("val_knn_acc1", self.knn.compute(), sync_dist=True)

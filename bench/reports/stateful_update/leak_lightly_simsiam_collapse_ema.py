# Source: https://github.com/lightly-ai/lightly/blob/07133e17957d072ce6f3f91a9c0b6b33372d0eac/docs/source/tutorials_source/package/tutorial_simsiam_esa.py
# Report: removed the `.item()` from `avg_loss = w * avg_loss + (1 - w) * loss.item()` in lightly's SimSiam (ESA satellite tiles) tutorial training loop
# Shape: the moving average of the loss reads its own previous value and the attached loss each step, so avg_loss carries a graph chain through every iteration of every epoch
# Expect: TML005 line 95

import math

import lightly
import torch
import torch.nn as nn
import torchvision
from lightly.models.modules.heads import SimSiamPredictionHead, SimSiamProjectionHead

num_workers = 8
batch_size = 128
seed = 1
epochs = 25
input_size = 256

# dimension of the embeddings
num_ftrs = 512
# dimension of the output of the prediction and projection heads
out_dim = proj_hidden_dim = 512
# the prediction head uses a bottleneck architecture
pred_hidden_dim = 128

path_to_data = "/datasets/sentinel-2-italy-v1/"


class SimSiam(nn.Module):
    def __init__(self, backbone, num_ftrs, proj_hidden_dim, pred_hidden_dim, out_dim):
        super().__init__()
        self.backbone = backbone
        self.projection_head = SimSiamProjectionHead(num_ftrs, proj_hidden_dim, out_dim)
        self.prediction_head = SimSiamPredictionHead(out_dim, pred_hidden_dim, out_dim)

    def forward(self, x0, x1):
        f0 = self.backbone(x0).flatten(start_dim=1)
        f1 = self.backbone(x1).flatten(start_dim=1)
        z0 = self.projection_head(f0)
        z1 = self.projection_head(f1)
        p0 = self.prediction_head(z0)
        p1 = self.prediction_head(z1)
        # stop gradient on the projections
        return p0, p1, z0.detach(), z1.detach()


collate_fn = lightly.data.SimCLRCollateFunction(input_size=input_size, hf_prob=0.5, vf_prob=0.5, rr_prob=0.5)
dataset_train_simsiam = lightly.data.LightlyDataset(input_dir=path_to_data)
dataloader_train_simsiam = torch.utils.data.DataLoader(
    dataset_train_simsiam,
    batch_size=batch_size,
    shuffle=True,
    collate_fn=collate_fn,
    drop_last=True,
    num_workers=num_workers,
)

resnet = torchvision.models.resnet18()
backbone = nn.Sequential(*list(resnet.children())[:-1])
model = SimSiam(backbone, num_ftrs, proj_hidden_dim, pred_hidden_dim, out_dim)

# symmetric negative cosine similarity, no negatives needed
criterion = lightly.loss.NegativeCosineSimilarity()
lr = 0.05 * batch_size / 256
optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)

device = "cuda" if torch.cuda.is_available() else "cpu"
model.to(device)

avg_loss = 0.
avg_output_std = 0.
for e in range(epochs):

    for (x0, x1), _, _ in dataloader_train_simsiam:
        x0 = x0.to(device)
        x1 = x1.to(device)

        # predictions p0, p1 and (detached) projections z0, z1
        p0, p1, z0, z1 = model(x0, x1)

        loss = 0.5 * (criterion(p0, z0) + criterion(p1, z1))
        loss.backward()

        optimizer.step()
        optimizer.zero_grad()

        # per-dimension std of the l2-normalized outputs, to watch for collapse
        output = p0.detach()
        output = torch.nn.functional.normalize(output, dim=1)
        output_std = torch.std(output, 0).mean()

        # moving averages of the loss and of the output std
        w = 0.9
        avg_loss = w * avg_loss + (1 - w) * loss  # expect: TML005
        avg_output_std = w * avg_output_std + (1 - w) * output_std.item()

    # collapse is large when the std is much smaller than 1 / sqrt(dim)
    collapse_level = max(0., 1 - math.sqrt(out_dim) * avg_output_std)
    print(f"[Epoch {e:3d}] "
          f"Loss = {avg_loss:.2f} | "
          f"Collapse Level: {collapse_level:.2f} / 1.00")

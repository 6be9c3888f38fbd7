# Source: https://github.com/GreedYLearner1146/ANROT-HELANet/blob/d1dd849db8fa0a9b17a2225a17cc9451bb3781d2/loss_functions.py
# Report: the repo's episodic fit() returns loss.item() and training.py appends it to all_loss
# Shape: the helper reduces the loss to a Python float before returning it, so the list that outlives the episode loop holds floats; evaluate() is @torch.no_grad()
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from tqdm import tqdm


def hellinger_dist(a, b):
    a = torch.sqrt(torch.softmax(a, dim=-1)).unsqueeze(1)
    b = torch.sqrt(torch.softmax(b, dim=-1)).unsqueeze(0)
    return torch.sqrt(((a - b) ** 2).sum(-1) / 2)


class ProtoHellinger(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, support_images, support_labels, query_images):
        z_support = self.backbone(support_images)
        z_query = self.backbone(query_images)
        n_way = len(torch.unique(support_labels))
        z_proto = torch.cat([
            z_support[torch.nonzero(support_labels == c)].mean(0) for c in range(n_way)
        ])
        return -hellinger_dist(z_query, z_proto)


def sliding_average(values, window):
    return sum(values[-window:]) / len(values[-window:])


backbone = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
model = ProtoHellinger(backbone).cuda()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def fit(support_images, support_labels, query_images, query_labels):
    optimizer.zero_grad()
    scores = model(support_images.cuda(), support_labels.cuda(), query_images.cuda())
    loss = criterion(scores, query_labels.cuda()) + 0.5 * scores.logsumexp(1).mean()
    loss.backward()
    optimizer.step()
    return loss.item()


@torch.no_grad()
def evaluate(data_loader):
    model.eval()
    correct, total = 0, 0
    for support_images, support_labels, query_images, query_labels, _ in data_loader:
        scores = model(support_images.cuda(), support_labels.cuda(), query_images.cuda())
        correct += (scores.argmax(1) == query_labels.cuda()).sum().item()
        total += len(query_labels)
    return 100.0 * correct / total


def train(train_loader, log_every=10):
    all_loss = []
    model.train()
    with tqdm(enumerate(train_loader), total=len(train_loader)) as bar:
        for episode_index, (support_images, support_labels, query_images,
                            query_labels, _) in bar:
            loss_value = fit(support_images.float(), support_labels,
                             query_images.float(), query_labels)
            all_loss.append(loss_value)
            if episode_index % log_every == 0:
                bar.set_postfix(loss=float(sliding_average(all_loss, log_every)))
    return all_loss

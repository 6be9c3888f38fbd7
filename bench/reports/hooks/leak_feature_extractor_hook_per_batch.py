# Source: https://github.com/CindyXWu/robust-socratic/blob/33c71b14d8103b2a5919aa2c2f2f2a2cc36297ae/Lent/feature_match.py
# Report: feature_extractor registers a new forward hook on the student/teacher layer every time it is called (once per training batch) and never removes it, so hooks pile up and every old closure keeps appending feature maps to its own list
# Shape: a free helper registers a capturing hook and runs a forward pass to grab one layer's activations; the distillation loop calls it for both models on every batch
# Expect: TML007 line 29
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


def feature_map_diff(s_map, t_map, aggregate_chan=False):
    if aggregate_chan:
        s_map = torch.sqrt(torch.sum(s_map.abs() ** 2, dim=1))
        t_map = torch.sqrt(torch.sum(t_map.abs() ** 2, dim=1))
    s_map = s_map.flatten(1)
    t_map = t_map.flatten(1)
    s_unit = s_map / s_map.norm(p=2, dim=-1, keepdim=True)
    t_unit = t_map / t_map.norm(p=2, dim=-1, keepdim=True)
    return (s_unit - t_unit).pow(2).sum(dim=-1).mean()


def feature_extractor(model, inputs, layer_num):
    features = []

    def forward_hook(module, inp, out):
        features.append(out)

    layer = list(model.children())[0][layer_num]
    layer.register_forward_hook(forward_hook)  # expect: TML007
    model(inputs)
    return features[0]


def base_distill_loss(scores, targets, temp):
    soft_targets = F.softmax(targets / temp, dim=1)
    return F.kl_div(F.log_softmax(scores / temp, dim=1), soft_targets, reduction="batchmean") * temp ** 2


def train_distill(student, teacher, train_loader, epochs, lr=0.01, alpha=0.5, temp=4.0, device="cuda"):
    student, teacher = student.to(device), teacher.to(device).eval()
    optimizer = torch.optim.SGD(student.parameters(), lr=lr, momentum=0.9)
    history = []
    for epoch in range(epochs):
        student.train()
        for inputs, labels in tqdm(train_loader, desc=f"epoch {epoch}"):
            inputs = inputs.to(device)
            s_map = feature_extractor(student, inputs, 2)
            t_map = feature_extractor(teacher, inputs, 2).detach()
            scores = student(inputs)
            with torch.no_grad():
                targets = teacher(inputs)
            loss = (1 - alpha) * base_distill_loss(scores, targets, temp) + alpha * feature_map_diff(s_map, t_map)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history.append(loss.item())
    return history


class TinyConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(64 * 16, num_classes),
        )

    def forward(self, x):
        return self.body(x)

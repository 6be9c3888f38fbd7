# Source: https://github.com/marcellobarylli/Recurrent-Parameter-Generation/blob/f579c2860068afa1cbc94440756616cf953bfa17/dataset/imagenet_vitsmall/test.py
# Report: the RPG evaluation harness scores every checkpoint in a folder (trained or generated ViT-S weights) with the same test() loop; upstream loads each file with map_location="cpu", here torch.load() is called bare
# Shape: each torch.load(item) in the sweep restores the tensors on the device they were saved from (GPU 0 for checkpoints written from a CUDA model), a full extra copy of the weights next to the live model before load_state_dict copies them in
# Expect: TML011 line 66
import os
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder
import torchvision.transforms as transforms
from tqdm.auto import tqdm
import timm

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
config = {"batch_size": 200, "num_workers": 16, "test_root": "./imagenet/val"}

test_loader = DataLoader(
    dataset=ImageFolder(
        root=config["test_root"],
        transform=transforms.Compose([
            transforms.Resize(224),
            transforms.CenterCrop(224),
            transforms.ToTensor(),
            transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
        ])),
    batch_size=config["batch_size"],
    num_workers=config["num_workers"],
    shuffle=False,
    pin_memory=True,
)

model = timm.create_model("vit_small_patch16_224", pretrained=False).to(device)
criterion = nn.CrossEntropyLoss()


@torch.no_grad()
def test(model=model):
    model.eval()
    all_targets, all_predicts = [], []
    test_loss, correct, total = 0, 0, 0
    for batch_idx, (inputs, targets) in tqdm(enumerate(test_loader), total=len(test_loader)):
        inputs, targets = inputs.to(device), targets.to(device)
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        all_targets.extend(targets.flatten().tolist())
        test_loss += loss.item()
        _, predicts = outputs.max(1)
        all_predicts.extend(predicts.flatten().tolist())
        total += targets.size(0)
        correct += predicts.eq(targets).sum().item()
    loss = test_loss / (batch_idx + 1)
    acc = correct / total
    print(f"Loss: {loss:.4f} | Acc: {acc:.4f}\n")
    model.train()
    return loss, acc, all_targets, all_predicts


if __name__ == "__main__":
    test_item = sys.argv[1] if len(sys.argv) > 1 else "./checkpoint"
    test_items = [os.path.join(test_item, f) for f in sorted(os.listdir(test_item))] if os.path.isdir(test_item) else [test_item]

    results = {}
    for item in test_items:
        state = torch.load(item)  # expect: TML011
        model.load_state_dict({key: value.to(torch.float32).to(device) for key, value in state.items()})
        loss, acc, all_targets, all_predicts = test(model=model)
        results[os.path.basename(item)] = acc
    for name, acc in sorted(results.items(), key=lambda kv: -kv[1]):
        print(f"{name}: {acc:.4f}")

# Source: https://github.com/akshay-antony/Adversarial-Point-Cloud/blob/1d28949fcdf026834db6557b923822762893698d/pointNetFGSM/fgsm_attack.py
# Report: audit of the PointNet FGSM evaluation: the perturbed cloud (still attached to the input's graph) is re-classified after model.eval() with grad enabled, the input gradient is taken with a full backward that fills every parameter's .grad, and predictions/targets are grown with torch.cat each batch
# Shape: fgsm_perturb() backprops the NLL to read point.grad; attack() switches to eval and forwards the adversarial cloud without no_grad; the ModelNet40 loop re-concatenates total_preds / total_targets
# Expect: TML003 line 30; TML020 line 23; TML008 line 58; TML008 line 59
import argparse

import torch
import torch.nn as nn
from sklearn.metrics import confusion_matrix, precision_score, recall_score
from torch.utils.data import DataLoader

from dataset import PointCloudData
from model import PointNet

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def fgsm_perturb(model, criterion, points, labels, eps):
    points.requires_grad = True
    logits, _, _ = model(points.transpose(1, 2))
    model.zero_grad()
    loss = criterion(logits, labels)
    loss.backward()  # expect: TML020
    return points + eps * points.grad.sign()


def attack(model, criterion, points, labels, eps):
    adv_points = fgsm_perturb(model, criterion, points, labels, eps)
    model = model.eval()
    logits, _, _ = model(adv_points.transpose(1, 2))  # expect: TML003
    _, preds = torch.max(logits.data, 1)
    return preds


def main():
    parser = argparse.ArgumentParser(description="FGSM on PointNet / ModelNet40")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--epsilon", type=float, default=0.01)
    args = parser.parse_args()

    test_set = PointCloudData("ModelNet40", folder="test")
    loader = DataLoader(test_set, batch_size=args.batch_size, shuffle=False, num_workers=4)
    model = PointNet().to(device).eval()
    model.load_state_dict(torch.load("./modelnet40.pth", map_location=device))
    criterion = nn.NLLLoss()

    total_preds = torch.zeros(0)
    total_targets = torch.zeros(0)
    correct, seen = 0.0, 0
    for data in loader:
        points = data["pointcloud"].float().to(device)
        labels = data["category"].to(device)
        preds = attack(model, criterion, points, labels, eps=args.epsilon)

        acc = (preds == labels).float().mean()
        correct += acc.item() * preds.shape[0]
        seen += preds.shape[0]
        total_preds = torch.cat([total_preds, preds.cpu().float()], dim=0)  # expect: TML008
        total_targets = torch.cat([total_targets, labels.cpu().float()], dim=0)  # expect: TML008

    y_true, y_pred = total_targets.numpy(), total_preds.numpy()
    print("accuracy under attack: %.2f%%" % (100.0 * correct / seen))
    print(confusion_matrix(y_true, y_pred))
    print("recall", recall_score(y_true, y_pred, average=None))
    print("precision", precision_score(y_true, y_pred, average=None))


if __name__ == "__main__":
    main()

# Source: https://deeplizard.com/learn/video/0LhiS6yu2qQ
# Report: tutorial get_all_preds grows all_preds with torch.cat((all_preds, preds), dim=0) per batch over the 60000-sample FashionMNIST train set; without gradient tracking disabled the result carries grad_fn=CatBackward and the graph of every batch
# Shape: the concat accumulator is rebound inside the batch loop from the graph-attached network output; no no_grad on the helper nor at its call site
# Expect: TML008 line 38; TML001 line 38
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as transforms


class Network(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels=1, out_channels=6, kernel_size=5)
        self.conv2 = nn.Conv2d(in_channels=6, out_channels=12, kernel_size=5)
        self.fc1 = nn.Linear(in_features=12 * 4 * 4, out_features=120)
        self.fc2 = nn.Linear(in_features=120, out_features=60)
        self.out = nn.Linear(in_features=60, out_features=10)

    def forward(self, t):
        t = F.max_pool2d(F.relu(self.conv1(t)), kernel_size=2, stride=2)
        t = F.max_pool2d(F.relu(self.conv2(t)), kernel_size=2, stride=2)
        t = F.relu(self.fc1(t.reshape(-1, 12 * 4 * 4)))
        t = F.relu(self.fc2(t))
        return self.out(t)


def get_num_correct(preds, labels):
    return preds.argmax(dim=1).eq(labels).sum().item()


def get_all_preds(model, loader):
    all_preds = torch.tensor([])
    for batch in loader:
        images, labels = batch
        preds = model(images)
        all_preds = torch.cat((all_preds, preds), dim=0)  # expect: TML008, TML001
    return all_preds


def confusion_matrix(targets, train_preds, num_classes=10):
    stacked = torch.stack((targets, train_preds.argmax(dim=1)), dim=1)
    cmt = torch.zeros(num_classes, num_classes, dtype=torch.int64)
    for true_label, pred_label in stacked.tolist():
        cmt[true_label, pred_label] = cmt[true_label, pred_label] + 1
    return cmt


def main(network):
    train_set = torchvision.datasets.FashionMNIST(
        root="./data/FashionMNIST", train=True, download=True,
        transform=transforms.Compose([transforms.ToTensor()]),
    )
    prediction_loader = torch.utils.data.DataLoader(train_set, batch_size=10000)
    train_preds = get_all_preds(network, prediction_loader)
    print("total correct:", get_num_correct(train_preds, train_set.targets))
    print(confusion_matrix(train_set.targets, train_preds))

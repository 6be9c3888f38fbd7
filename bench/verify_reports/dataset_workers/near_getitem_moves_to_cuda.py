# Source: https://github.com/pytorch/pytorch/issues/13775
# Report: the workers must stay on the CPU; the projection moves to the main process.
# Shape: __getitem__ returns host tensors, and the loop moves each batch to the device.
# Expect: near-miss: must be silent
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class ProjectedImages(Dataset):
    def __init__(self):
        self.images = torch.randn(384, 64)
        self.projection = torch.randn(64, 64)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        image = self.images[index]
        return image @ self.projection, index % 3


if __name__ == "__main__":
    model = nn.Linear(64, 3).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in DataLoader(ProjectedImages(), batch_size=16, num_workers=2):
        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(loss.item())

# Source: https://github.com/pytorch/pytorch/issues/13775
# Report: a ToCuda() transform in the dataset's pipeline (to run a large matmul on the GPU during preprocessing) made the loader fail with num_workers=1.
# Shape: __getitem__ moves each sample to the device before a matmul; the DataLoader uses two worker processes.
# Expect: TML010 lines 22, 23
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
        image = self.images[index].to(device)  # expect: TML010
        return image @ self.projection.to(device), index % 3  # expect: TML010


if __name__ == "__main__":
    model = nn.Linear(64, 3).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in DataLoader(ProjectedImages(), batch_size=16, num_workers=2):
        loss = nn.functional.cross_entropy(model(x), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(loss.item())

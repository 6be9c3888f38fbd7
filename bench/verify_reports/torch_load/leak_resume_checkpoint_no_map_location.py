# Source: https://github.com/chenxin-dlut/TransT/issues/61
# Report: removing map_location='cpu' from the checkpoint load made resuming an interrupted training run out of GPU memory.
# Shape: the training state (model and optimizer) is saved from the device and loaded back without map_location before training resumes.
# Expect: TML011 line 20
import os
import tempfile

import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
net = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 128)).to(device)
optimizer = torch.optim.Adam(net.parameters())
net(torch.randn(4, 128, device=device)).sum().backward()
optimizer.step()
path = os.path.join(tempfile.mkdtemp(), "checkpoint.pth.tar")
torch.save({"net": net.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}, path)

checkpoint_dict = torch.load(path)  # expect: TML011
net.load_state_dict(checkpoint_dict["net"])
optimizer.load_state_dict(checkpoint_dict["optimizer"])
for epoch in range(checkpoint_dict["epoch"], 6):
    loss = net(torch.randn(4, 128, device=device)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())

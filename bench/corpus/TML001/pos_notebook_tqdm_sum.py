# Modelled on: https://github.com/pytorch/pytorch/issues/64586
# Report: memory increased after every epoch until OOM; the fix was adding .item() where the loss was accumulated.
import torch as T
from tqdm import tqdm

model = T.nn.Sequential(T.nn.Linear(32, 64), T.nn.ReLU(), T.nn.Linear(64, 1)).cuda()
opt = T.optim.Adam(model.parameters())
loss_fn = T.nn.SmoothL1Loss()
train_loader = [(T.randn(16, 32), T.randn(16, 1)) for _ in range(100)]

running = 0.0
for epoch in range(10):
    for xb, yb in tqdm(train_loader):
        xb, yb = xb.cuda(), yb.cuda()
        pred = model(xb)
        loss = loss_fn(pred, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        running = running + loss  # expect: TML001
    print(epoch, running / len(train_loader))

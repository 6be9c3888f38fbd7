# Modelled on: https://github.com/snakers4/silero-vad/pull/699
# Report: the tuning utility called loss.backward() and optimizer.step() without optimizer.zero_grad(), which "could cause tuning error".
import torch as T
import torch.nn as nn
from tqdm import tqdm

model = nn.GRU(64, 64, batch_first=True)
head = nn.Linear(64, 1)
optimizer = T.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-3)
criterion = nn.BCEWithLogitsLoss()
loader = [(T.randn(8, 50, 64), T.randint(0, 2, (8, 50, 1)).float()) for _ in range(20)]

for epoch in range(5):
    for x, y in tqdm(loader):
        out, _ = model(x)
        loss = criterion(head(out), y)
        loss.backward()
        optimizer.step()  # expect: TML002

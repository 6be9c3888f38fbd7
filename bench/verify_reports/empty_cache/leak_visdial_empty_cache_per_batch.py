# Source: https://github.com/batra-mlp-lab/visdial-challenge-starter-pytorch/pull/34
# Report: the code speed-up moves torch.cuda.empty_cache() from after every batch to after every epoch.
# Shape: the batch loop empties the cache after each batch's step.
# Expect: TML009 line 20
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
encoder = nn.GRU(32, 64, batch_first=True).to(device)
decoder = nn.Linear(64, 100).to(device)
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-3)
for epoch in range(1):
    for batch in range(24):
        hidden, _ = encoder(torch.randn(8, 10, 32, device=device))
        loss = nn.functional.cross_entropy(decoder(hidden[:, -1]), torch.randint(0, 100, (8,), device=device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()  # expect: TML009
print(loss.item())
